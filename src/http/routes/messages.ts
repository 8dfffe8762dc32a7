import { Type, type Static } from '@sinclair/typebox';
import { checkPrivateKeyOrigin } from '../../domain/caller.js';
import { digestsEqual, isPlausibleMessageId, sha256 } from '../../domain/ids.js';
import { pastRetention, retentionDaysOf } from '../../domain/retention.js';
import { checkPublicOrigin } from '../../domain/origin.js';
import { ApiError } from '../../errors/api-error.js';
import type { KeyMode } from '../../domain/types.js';
import type { StoredMessage } from '../../storage/messages.js';
import type { Store } from '../../storage/store.js';
import type { App, AppServices } from '../app-types.js';
import { authenticateToRead } from '../auth.js';
import { clientInfo } from '../headers.js';
import { responses, Timestamp } from '../schemas.js';
import { iso, isoOrNull } from '../time.js';
import { timelineEntry } from './timeline.js';
import { TimelineEventSchema } from './timeline-schema.js';
import { TemplateIdSchema } from '../../domain/template-id.js';

/** The body of GET /v1/messages/{id}; the admin API's message detail extends it. */
export const Message = Type.Object({
  message_id: Type.String(),
  status: Type.String(),
  created_at: Timestamp,
  sent_at: Type.Union([Timestamp, Type.Null()]),
  template_id: TemplateIdSchema,
  service_id: Type.String(),
  mode: Type.Union([Type.Literal('live'), Type.Literal('test')], {
    description: 'The mode of the key that sent it: a test message was captured in the test inbox, never sent, never charged',
  }),
  simulated: Type.Optional(
    Type.Literal(true, {
      description: 'Present when it went to a simulator address: its events are simulated, nothing was delivered to anyone',
    }),
  ),
  sent_via: Type.Optional(
    Type.String({
      description:
        'The service that sent it (its `sent` event names it): ' +
        '`service_id` unless the message failed over to another service of its chain',
    }),
  ),
  provider_message_id: Type.Optional(
    Type.String({
      description:
        "The provider's own id for the message (an API's MessageID or id, an SMTP relay's id in its 250 reply), when it " +
        'reported one: ' +
        "the latest hand-off's, as a message retried for some recipients is handed off again (each `sent` event's " +
        '`details.provider_message_id` ' +
        "is its own). The id the provider's events and dashboard name. Private-key reads only",
    }),
  ),
  events: Type.Array(TimelineEventSchema, {
    description: 'Oldest first (in the order recorded); see the README, "Events after hand-off"',
  }),
  recipients: Type.Optional(
    Type.Array(
      Type.Object({
        address: Type.String(),
        kind: Type.Union([Type.Literal('to'), Type.Literal('cc'), Type.Literal('bcc')]),
        state: Type.Union(
          ['pending', 'sent', 'deferred', 'delivered', 'bounced', 'complained', 'failed', 'suppressed', 'discarded'].map((s) =>
            Type.Literal(s),
          ),
          {
            description:
              'pending: not delivered yet; sent: the relay accepted it for this recipient; deferred: refused ' +
              'for now, retried for this recipient alone; delivered: the provider reported delivery; bounced: ' +
              'refused for good, at hand-off or reported later (suppressed when hard); complained: the ' +
              'recipient reported it as spam (suppressed); failed: its retries ran out, the message failed, ' +
              'or the provider rejected it; suppressed: on the suppression list since the send, dropped; ' +
              'discarded: never sent, as the message was discarded (cancelled by an operator, or every To address suppressed)',
          },
        ),
        reason: Type.Optional(Type.String({ description: "The relay's reply, or why it was not sent" })),
      }),
      {
        description:
          'Each recipient and its own delivery state. Private-key reads only: a public key must not learn fixed or Bcc addresses',
      },
    ),
  ),
});

const notFound = () => new ApiError('message_not_found');

/** The service of the latest `sent` event (failover may have sent it through another than service_id). */
function sentVia(events: ReadonlyArray<{ type: string; detail: Record<string, unknown> | null }>): { sent_via?: string } {
  const sent = events.findLast((e) => e.type === 'sent' && typeof e.detail?.service_id === 'string');
  const via = sent?.detail?.service_id;
  return typeof via === 'string' ? { sent_via: via } : {};
}

/**
 * A stored message as GET /v1/messages/{id} shows it. `withPrivate` (a private key, or the admin
 * API): the recipients, their addresses in the timeline and the provider's id. A public key is a
 * browser's: the template's fixed and Bcc addresses are not for it to see.
 */
export async function messageBody(store: Store, message: StoredMessage, withPrivate: boolean): Promise<Static<typeof Message>> {
  const events = await store.messages.events(message.id);
  const recipients = withPrivate ? await store.messages.recipientsOf(message) : undefined;
  return {
    message_id: message.id,
    status: message.status,
    created_at: iso(message.created_at),
    sent_at: isoOrNull(message.sent_at),
    template_id: message.template_id,
    service_id: message.service_id,
    mode: message.mode,
    ...(message.simulated ? { simulated: true as const } : {}),
    ...sentVia(events),
    ...(withPrivate && message.provider_message_id !== null ? { provider_message_id: message.provider_message_id } : {}),
    events: events.map((e) => timelineEntry(e, withPrivate, message.simulated)),
    ...(recipients !== undefined
      ? {
          recipients: recipients.map((r) => ({
            address: r.address,
            kind: r.kind,
            state: r.state,
            ...(r.reason !== null ? { reason: r.reason } : {}),
          })),
        }
      : {}),
  };
}

/**
 * Whether a message is there for this reader: within its mode's retention (test messages keep
 * MAILROOM_TEST_RETENTION_DAYS), and for a test key a test message (decision D1: a leaked test
 * key exposes no live recipient). Anything else is answered as an id that never existed.
 */
export function readable(
  message: StoredMessage | undefined,
  now: number,
  config: { retentionDays: number; testRetentionDays: number },
  readerMode: KeyMode = 'live',
): message is StoredMessage {
  if (message === undefined) return false;
  if (readerMode === 'test' && message.mode !== 'test') return false;
  return !pastRetention(message.created_at, now, retentionDaysOf(message.mode, config));
}

/**
 * GET /v1/messages/{id}: any message of the organization with a private key (a test key: its
 * test messages only); with a public key only alongside that message's status token (header,
 * or the deprecated `?token=`). A wrong or missing token looks exactly like a missing message.
 * A send_only private key reads no message (403 forbidden, send_only_key: issue 29).
 */
export function registerMessages(app: App, { store, clock, config }: AppServices): void {
  app.get(
    '/v1/messages/:id',
    {
      schema: {
        tags: ['messages'],
        summary: 'Status and event timeline of a message',
        security: [{ privateKey: [] }, { publicKey: [] }],
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: Type.Object({
          token: Type.Optional(Type.String({ maxLength: 200, description: 'Deprecated: use X-Mail-Status-Token' })),
        }),
        headers: Type.Object({ 'x-mail-status-token': Type.Optional(Type.String({ maxLength: 200 })) }),
        response: responses({ 200: Message }, [
          'invalid_body',
          'unauthorized',
          'invalid_public_key',
          'invalid_private_key',
          'private_key_in_browser',
          'origin_not_allowed',
          'forbidden',
          'message_not_found',
          'rate_limited',
        ]),
      },
    },
    async (request) => {
      const caller = await authenticateToRead(request, store);
      const client = clientInfo(request);
      if (caller.key.type === 'private') checkPrivateKeyOrigin(caller, client.origin);
      else checkPublicOrigin(caller.org, client);

      // An id no message can have is answered like any unknown id: the rule stays unexposed.
      const id = request.params.id;
      const message = isPlausibleMessageId(id) ? await store.messages.get(caller.org.id, id) : undefined;
      if (!readable(message, clock.now(), config, caller.key.mode)) throw notFound();
      if (caller.key.type === 'public') {
        // An empty header is no token: clients that always send the header, blank when they keep
        // the token in the query, must not have it hide the deprecated ?token=.
        const header = request.headers['x-mail-status-token'];
        const token = header !== undefined && header !== '' ? header : request.query.token;
        if (token === undefined || token === '' || !digestsEqual(sha256(token), message.status_token_hash)) throw notFound();
      }
      return messageBody(store, message, caller.key.type === 'private');
    },
  );
}
