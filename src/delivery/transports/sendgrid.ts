import type { DeliveryError, OutgoingEmail, Transport, TransportFactory } from '../transport.js';
import { ServiceTestError } from '../transport.js';
import { createProviderHttp, type ProviderResponse } from './http-client.js';
import { headerObject, structuredMail } from './mime-to-json.js';
import {
  describe,
  header,
  jsonObject,
  permanent,
  resetAtMs,
  retryAfterMs,
  service,
  temporary,
  throttled,
  verifyFailure,
  verifyRequest,
} from './http-errors.js';
import {
  base64,
  endpointOf,
  METADATA_KEY,
  recipientGroups,
  requiredString,
  settingsBlock,
  type RecipientGroup,
} from './provider-mail.js';
import type { Address } from '../../templates/recipients.js';

/**
 * SendGrid over its v3 Mail Send API (twilio.com/docs/sendgrid/api-reference/mail-send):
 * `POST /v3/mail/send` with `Authorization: Bearer <api_key>`; 202 with an empty body, the
 * provider's id in the `X-Message-Id` header (events' sg_message_id begins with it).
 *
 * Settings (`service.settings.sendgrid`): `api_key` (required), `endpoint` (default
 * `https://api.sendgrid.com`; EU subusers: `https://api.eu.sendgrid.com`).
 * Credentials test: `GET /v3/scopes` (the calling key's scopes; `mail.send` must be among them).
 *
 * Error mapping (the Mail Send errors page and "How to use the v3 API: responses"):
 *
 * Condition → outcome — SendGrid's wording:
 * - 429 → deferred until `X-RateLimit-Reset` (epoch seconds; else Retry-After), pacing slowed — "too many requests"
 * - 5xx; timeouts, connection errors → deferred — "An error occurred on a SendGrid server" / "The SendGrid v3 Web API is not
 *   available"
 * - 401 → held_service_error — "The provided authorization grant is invalid, expired, or revoked"
 * - 403, field `from` or "verified Sender Identity" → held_service_error (test reason `unverified_sender`) — "The from address
 *   does not match a verified Sender Identity. Mail cannot be sent until this error is resolved."
 * - 403 "temporarily blocked" / "Temporary block" → deferred (a documented exception to the issue's 401/403 → held_service_error:
 *   SendGrid lifts the block by itself) — "You are temporarily blocked from sending emails due to repeated bad requests"
 * - 403, any other (a key without `mail.send`) → held_service_error — "access forbidden"
 * - 400 (field errors), 413 → failed — "Each error returns an HTTP 400" / "The JSON payload you have included in your request is
 *   too large."
 * - any other 4xx → failed
 * - a redirect (3xx) → held_service_error — the endpoint is not SendGrid's API
 *
 * SendGrid never refuses a recipient synchronously (suppressed addresses are dropped after the
 * 202 and reported as `dropped` events), so there is no bounce row.
 */

const DEFAULT_ENDPOINT = 'https://api.sendgrid.com';

const TEMPORARY_BLOCK = /temporar(?:il)?y block/i;
const SENDER_IDENTITY = /sender identity/i;

function errorsOf(body: string): Array<{ message: string; field: string | null }> {
  const errors = jsonObject(body)?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.map((e: unknown) => {
    const message = typeof e === 'object' && e !== null ? Reflect.get(e, 'message') : undefined;
    const field = typeof e === 'object' && e !== null ? Reflect.get(e, 'field') : undefined;
    return { message: typeof message === 'string' ? message : '', field: typeof field === 'string' ? field : null };
  });
}

export function isUnverifiedSender(res: ProviderResponse): boolean {
  return res.status === 403 && errorsOf(res.body).some((e) => e.field === 'from' || SENDER_IDENTITY.test(e.message));
}

/** How one SendGrid answer that is not a success is treated (the table above). */
export function classifySendgrid(res: ProviderResponse, now: number): DeliveryError {
  const status = res.status;
  const message = `sendgrid ${describe(status, res.body)}`.slice(0, 500);
  if (status === 429)
    return throttled(message, resetAtMs(res.headers, 'x-ratelimit-reset', now) ?? retryAfterMs(res.headers, now));
  if (status >= 500) return temporary(message, retryAfterMs(res.headers, now));
  if (status === 401) return service(message);
  if (status === 403) {
    if (isUnverifiedSender(res)) return service(message);
    return TEMPORARY_BLOCK.test(res.body) ? temporary(message) : service(message);
  }
  if (status >= 300 && status < 400)
    return service(
      `sendgrid ${status}: the endpoint redirects ` +
        `(${header(res.headers, 'location') ?? 'no location'}); check the service's sendgrid.endpoint`,
    );
  return permanent(message);
}

const person = (a: Address) => (a.name === '' ? { email: a.address } : { email: a.address, name: a.name });

function personalization(group: RecipientGroup, messageId: string) {
  return {
    to: group.to.map(person),
    ...(group.cc.length > 0 ? { cc: group.cc.map(person) } : {}),
    ...(group.bcc.length > 0 ? { bcc: group.bcc.map(person) } : {}),
    custom_args: { [METADATA_KEY]: messageId },
  };
}

function bodyOf(mail: OutgoingEmail): string {
  const e = mail.email;
  // Each `value` must be non-empty, text/plain first (the Mail Send schema).
  const content = [
    ...(e.text !== '' ? [{ type: 'text/plain', value: e.text }] : []),
    ...(e.html !== '' ? [{ type: 'text/html', value: e.html }] : []),
  ];
  const [replyTo, ...moreReplyTo] = e.reply_to;
  return JSON.stringify({
    // Several groups only when only Bcc recipients are owed: one personalization each.
    personalizations: recipientGroups(mail).map((g) => personalization(g, mail.messageId)),
    from: person(e.from),
    // reply_to and reply_to_list are mutually exclusive.
    ...(replyTo !== undefined && moreReplyTo.length === 0 ? { reply_to: person(replyTo) } : {}),
    ...(moreReplyTo.length > 0 ? { reply_to_list: e.reply_to.map(person) } : {}),
    subject: e.subject,
    content: content.length > 0 ? content : [{ type: 'text/plain', value: ' ' }],
    ...(mail.attachments.length > 0
      ? {
          attachments: mail.attachments.map((a) => ({
            content: base64(a.content),
            filename: a.filename,
            type: a.contentType ?? 'application/octet-stream',
            // An inline image of a submitted message (mime-to-json.ts), referenced as cid: in its HTML.
            ...(a.contentId !== undefined ? { disposition: 'inline', content_id: a.contentId } : { disposition: 'attachment' }),
          })),
        }
      : {}),
    headers: headerObject(mail),
    custom_args: { [METADATA_KEY]: mail.messageId },
  });
}

export const sendgridTransport: TransportFactory = (svc): Transport => {
  const block = settingsBlock(svc, 'sendgrid');
  const key = requiredString(block, 'sendgrid', 'api_key');
  const endpoint = endpointOf(block, 'sendgrid', DEFAULT_ENDPOINT);
  const http = createProviderHttp({ provider: 'sendgrid' });
  const auth = `Bearer ${key}`;
  return {
    async send(submitted) {
      // A submitted message (SMTP) is parsed into these fields first (mime-to-json.ts).
      const mail = await structuredMail(submitted);
      if (recipientGroups(mail).length === 0) throw permanent('sendgrid: no recipient left to send to');
      const res = await http.request({
        method: 'POST',
        url: `${endpoint}/v3/mail/send`,
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: bodyOf(mail),
      });
      // 200 is sandbox mode ("valid, but not queued"): accepted as the service's answer all the same.
      if (res.status === 202 || res.status === 200) {
        const id = header(res.headers, 'x-message-id');
        return {
          response: `sendgrid ${res.status}${id !== undefined ? ` ${id}` : ''}`,
          ...(id !== undefined ? { providerMessageId: id } : {}),
        };
      }
      throw classifySendgrid(res, Date.now());
    },
    async verify() {
      const res = await verifyRequest(http, {
        method: 'GET',
        url: `${endpoint}/v3/scopes`,
        headers: { authorization: auth, accept: 'application/json' },
      });
      if (res.status === 200) {
        const scopes = jsonObject(res.body)?.scopes;
        if (Array.isArray(scopes) && scopes.includes('mail.send')) return;
        throw new ServiceTestError('auth', 'sendgrid: the API key lacks the mail.send scope');
      }
      throw verifyFailure(res.status, classifySendgrid(res, Date.now()).message, isUnverifiedSender(res));
    },
    async close() {
      await http.close();
    },
  };
};
