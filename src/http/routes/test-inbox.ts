import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { type Caller, requirePrivateKey } from '../../domain/caller.js';
import { canonicalAddress } from '../../domain/addresses.js';
import type { Clock } from '../../domain/clock.js';
import { isPlausibleMessageId } from '../../domain/ids.js';
import { ApiError } from '../../errors/api-error.js';
import type { ErrorCode } from '../../errors/catalog.js';
import type { InboxFilter } from '../../storage/test-inbox.js';
import type { Store } from '../../storage/store.js';
import { inboxItem, inboxMessage, inboxRaw, listInbox, type RetentionSettings } from '../../testmode/inbox.js';
import type { App, AppServices } from '../app-types.js';
import { authenticateToRead } from '../auth.js';
import { headerValue } from '../headers.js';
import { decodeCursor, encodeCursor, textFilter } from '../history-query.js';
import { PRIVATE_KEY_ERRORS, responses, Timestamp } from '../schemas.js';
import { TemplateIdSchema } from '../../domain/template-id.js';

/**
 * The captured test inbox (issue 27 §4): every message sent with a test key, as its recipients
 * would have received it. A private test key reads its organization's inbox here; the operator
 * UI reads the same through the admin API (admin/routes/test-inbox.ts), which imports these
 * schemas and the page so the two never drift apart.
 */

const Addresses = Type.Array(Type.String());

export const InboxItemSchema = Type.Object({
  message_id: Type.String(),
  template_id: TemplateIdSchema,
  subject: Type.Union([Type.String(), Type.Null()]),
  from: Type.String(),
  to: Addresses,
  cc: Addresses,
  bcc: Type.Array(Type.String(), { description: 'In the envelope only: the captured bytes carry no Bcc header' }),
  created_at: Timestamp,
  size: Type.Integer({ description: 'Bytes of the captured message' }),
  status: Type.String({ description: "The message's status now (GET /v1/messages/{id} has its timeline)" }),
  mode: Type.Literal('test'),
});

export const InboxPage = Type.Object({
  items: Type.Array(InboxItemSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

/** A message's header fields in order (testmode/inbox-view.ts#parseHeaders); the admin message source shows them too. */
export const HeaderFields = (description: string) =>
  Type.Array(Type.Object({ name: Type.String(), value: Type.String() }), { description });

export const InboxMessageSchema = Type.Composite([
  InboxItemSchema,
  Type.Object({
    sha256: Type.String({ description: "The captured bytes' SHA-256 (hex); the raw download's ETag" }),
    captured_at: Timestamp,
    headers: HeaderFields('The header fields of the captured bytes in order, unfolded, encoded words decoded'),
    html: Type.Union([Type.String(), Type.Null()]),
    text: Type.Union([Type.String(), Type.Null()]),
    attachments: Type.Array(
      Type.Object({
        filename: Type.String(),
        content_type: Type.Union([Type.String(), Type.Null()]),
        size: Type.Union([Type.Integer(), Type.Null()]),
      }),
    ),
  }),
]);

export const InboxQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
  cursor: Type.Optional(Type.String({ maxLength: 2048 })),
  to: Type.Optional(
    Type.String({ minLength: 1, maxLength: 254, description: 'A recipient address (to, cc or bcc), exact match' }),
  ),
  template_id: Type.Optional(Type.String({ maxLength: 64 })),
  q: Type.Optional(
    Type.String({ maxLength: 254, description: 'Text in the subject, the sender or an address, case-insensitively' }),
  ),
});
export type InboxQuery = Static<typeof InboxQuery>;

export const InboxIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

/** The raw download: the captured bytes, never recomposed (the composer's boundaries and Date differ per run). */
export const RAW_RESPONSE = {
  description: 'The captured message (RFC 5322, CRLF), byte for byte as an SMTP relay would have received it',
  content: { 'message/rfc822': { schema: { type: 'string', format: 'binary' } } },
} as const;

/** The storage filter a validated query names. */
export function inboxFilter(q: InboxQuery): InboxFilter {
  const filter: InboxFilter = {};
  if (q.to !== undefined) filter.to = canonicalAddress(textFilter('to', q.to.trim()));
  if (q.template_id !== undefined) filter.template_id = textFilter('template_id', q.template_id);
  if (q.q !== undefined && q.q.trim() !== '') filter.q = textFilter('q', q.q.trim());
  if (q.cursor !== undefined) {
    const c = decodeCursor(q.cursor);
    filter.before = { created_at: c.created_at, message_id: c.id };
  }
  return filter;
}

export interface InboxDeps {
  store: Store;
  clock: Clock;
  config: RetentionSettings;
}

/** One page, newest first, keyset-paginated on (created_at, message_id) like GET /v1/history. */
export async function inboxPage(deps: InboxDeps, orgId: string, q: InboxQuery): Promise<Static<typeof InboxPage>> {
  const { entries, more } = await listInbox(deps.store, orgId, inboxFilter(q), q.limit, deps.clock.now(), deps.config);
  const last = entries[entries.length - 1];
  return {
    items: entries.map(inboxItem),
    next_cursor: more && last !== undefined ? encodeCursor(last.created_at, last.message_id) : null,
  };
}

/** An id no message can have is answered like any unknown id. */
export function checkInboxId(id: string): string {
  if (!isPlausibleMessageId(id)) throw new ApiError('message_not_found');
  return id;
}

/** Sends captured bytes as a download; a client holding the same ETag gets 304. */
export function sendRaw(reply: FastifyReply, raw: { bytes: Buffer; sha256: string; messageId: string }, ifNoneMatch?: string) {
  const etag = `"${raw.sha256}"`;
  reply
    .header('etag', etag)
    .header('cache-control', 'private, no-cache')
    .header('content-disposition', `attachment; filename="${raw.messageId}.eml"`);
  if (ifNoneMatch?.split(',').some((t) => t.trim() === etag)) return reply.code(304).send();
  return reply.type('message/rfc822').send(raw.bytes);
}

/** A private key, from where private keys may be used, and a test one: live keys never read captured mail. */
function requireTestKey(caller: Caller, origin: string | undefined): void {
  requirePrivateKey(caller, origin);
  if (caller.key.mode !== 'test')
    throw new ApiError('forbidden', {
      message: 'The test inbox is read with a test key (sk_test_…).',
      details: { reason: 'live_key' },
    });
}

const ERRORS: ErrorCode[] = [...PRIVATE_KEY_ERRORS, 'forbidden', 'rate_limited'];

export function registerTestInbox(app: App, { store, clock, config, blobs }: AppServices): void {
  const deps = { store, clock, config };
  const common = { tags: ['test-inbox'], security: [{ privateKey: [] }] };

  app.get(
    '/v1/test-inbox',
    {
      schema: {
        ...common,
        summary: 'Messages sent with test keys, as captured, newest first',
        querystring: InboxQuery,
        response: responses({ 200: InboxPage }, [...ERRORS, 'invalid_body']),
      },
    },
    async (request) => {
      const caller = await authenticateToRead(request, store);
      requireTestKey(caller, headerValue(request, 'origin'));
      return inboxPage(deps, caller.org.id, request.query);
    },
  );

  app.get(
    '/v1/test-inbox/:id',
    {
      schema: {
        ...common,
        summary: 'One captured message: its headers as captured, bodies and attachments',
        params: InboxIdParams,
        response: responses({ 200: InboxMessageSchema }, [...ERRORS, 'message_not_found']),
      },
    },
    async (request) => {
      const caller = await authenticateToRead(request, store);
      requireTestKey(caller, headerValue(request, 'origin'));
      const id = checkInboxId(request.params.id);
      return inboxMessage({ store, blobs: blobs.blobs, now: clock.now(), config }, caller.org.id, id);
    },
  );

  app.get(
    '/v1/test-inbox/:id/raw',
    {
      schema: {
        ...common,
        summary: 'One captured message as an .eml download, the exact bytes captured',
        params: InboxIdParams,
        response: {
          ...responses({}, [...ERRORS, 'message_not_found']),
          200: RAW_RESPONSE,
          304: { description: "Not modified: the If-None-Match ETag is the captured bytes' digest" },
        },
      },
    },
    async (request, reply) => {
      const caller = await authenticateToRead(request, store);
      requireTestKey(caller, headerValue(request, 'origin'));
      const id = checkInboxId(request.params.id);
      const raw = await inboxRaw({ store, blobs: blobs.blobs, now: clock.now(), config }, caller.org.id, id);
      return sendRaw(reply, raw, headerValue(request, 'if-none-match'));
    },
  );
}
