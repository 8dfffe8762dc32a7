import { Type, type Static } from '@sinclair/typebox';
import { messageAsComposed, type ComposedMessage } from '../../delivery/as-composed.js';
import { type RawComposer, rawComposer } from '../../delivery/transports/raw-mime.js';
import { isPlausibleMessageId } from '../../domain/ids.js';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import { headerValue } from '../../http/headers.js';
import { readable } from '../../http/routes/messages.js';
import { HeaderFields, sendRaw } from '../../http/routes/test-inbox.js';
import { responses } from '../../http/schemas.js';
import type { StoredMessage } from '../../storage/messages.js';
import { parseHeaders } from '../../testmode/inbox-view.js';
import { ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, LookupId } from './common.js';
import { requireOrganization } from './common.js';

/**
 * A message's source for the operator UI's message page (issue 29): `…/messages/{id}/raw`, the
 * `.eml` as composed for an SMTP relay (delivery/as-composed.ts), and `…/source`, the same bytes'
 * header fields decoded and their first 256 KiB as text for the page's Headers and Raw tabs.
 */

/** 256 KiB of source shown on the page: a 20 MB message with attachments stays a download. */
export const SOURCE_TEXT_BYTES = 256 * 1024;

const AS_COMPOSED =
  'The message as composed for an SMTP relay (RFC 5322, CRLF): a test message as captured in the test inbox; ' +
  'one submitted over SMTP as its stored bytes are delivered (Bcc and X-Mailroom-* removed, Message-ID and Date ' +
  'added where missing); any other composed from its stored rendered email with its Message-ID, `sent_at` (else ' +
  'its acceptance) as Date, Bcc in the envelope only, and the tracking header of its SMTP relay where one is read. ' +
  'DKIM-Signature is not included: it is made at each hand-off. A JSON-API provider (Postmark, SendGrid, Resend) ' +
  'builds its own MIME from the same fields. 404 `message_not_found` (details.reason `content_unavailable`) when ' +
  'the content is no longer stored or cannot be composed.';

const Params = Type.Object({ org: LookupId, id: Type.String({ minLength: 1, maxLength: 64 }) });

const Origin = Type.Union([Type.Literal('captured'), Type.Literal('submitted'), Type.Literal('composed')], {
  description: 'captured: the test inbox bytes; submitted: the stored SMTP submission; composed: composed for this answer',
});

export const MessageSource = Type.Object({
  origin: Origin,
  size: Type.Integer({ description: 'Bytes of the whole message (…/raw)' }),
  sha256: Type.String({ description: "The bytes' SHA-256 (hex); the raw download's ETag" }),
  headers: HeaderFields('The header fields in order, unfolded, encoded words (RFC 2047) decoded'),
  text: Type.String({ description: `The first ${SOURCE_TEXT_BYTES} bytes as UTF-8 text (…/raw has all of it)` }),
  truncated: Type.Boolean({ description: `true when the message is longer than ${SOURCE_TEXT_BYTES} bytes` }),
});

const RAW = {
  description: 'The message as composed (an .eml download)',
  content: { 'message/rfc822': { schema: { type: 'string', format: 'binary' } } },
} as const;

export function sourceView(c: ComposedMessage): Static<typeof MessageSource> {
  return {
    origin: c.origin,
    size: c.bytes.length,
    sha256: c.sha256,
    headers: parseHeaders(c.bytes),
    text: c.bytes.subarray(0, SOURCE_TEXT_BYTES).toString('utf8'),
    truncated: c.bytes.length > SOURCE_TEXT_BYTES,
  };
}

/** The organization's message within its retention, or 404 `message_not_found` as for an id that never existed. */
export async function requireMessage(services: Pick<AppServices, 'store' | 'clock' | 'config'>, orgId: string, id: string) {
  const message: StoredMessage | undefined = isPlausibleMessageId(id) ? await services.store.messages.get(orgId, id) : undefined;
  if (!readable(message, services.clock.now(), services.config)) throw new ApiError('message_not_found');
  return message;
}

export function registerMessageSourceRoutes(app: App, services: AppServices): void {
  const { store, clock, config, blobs } = services;
  let composer: RawComposer | undefined;
  app.addHook('onClose', async () => composer?.close());
  const composed = async (orgId: string, id: string) => {
    const message = await requireMessage(services, orgId, id);
    composer ??= rawComposer();
    return messageAsComposed({ store, blobs: blobs.blobs, composer, now: clock.now(), config }, message);
  };
  const errors = [...ADMIN_ERRORS, 'message_not_found' as const];

  app.get(
    '/organizations/:org/messages/:id/raw',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'One message as an .eml download, as composed for an SMTP relay',
        description: AS_COMPOSED,
        params: Params,
        response: {
          ...responses({}, errors),
          200: RAW,
          304: { description: "Not modified: the If-None-Match ETag is the bytes' SHA-256" },
        },
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      const c = await composed(org.id, request.params.id);
      return sendRaw(
        reply,
        { bytes: c.bytes, sha256: c.sha256, messageId: request.params.id },
        headerValue(request, 'if-none-match'),
      );
    },
  );

  app.get(
    '/organizations/:org/messages/:id/source',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "One message's source: the header fields of …/raw decoded, and its first 256 KiB as text",
        description: AS_COMPOSED,
        params: Params,
        response: responses({ 200: MessageSource }, errors),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      return sourceView(await composed(org.id, request.params.id));
    },
  );
}
