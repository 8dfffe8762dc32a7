import type { DeliveryError, DeliveryReceipt, OutgoingEmail, Transport, TransportFactory } from '../transport.js';
import { createProviderHttp, type ProviderResponse } from './http-client.js';
import { headerObject, structuredMail } from './mime-to-json.js';
import {
  describe,
  header,
  invalidRecipients,
  jsonObject,
  permanent,
  retryAfterMs,
  service,
  str,
  temporary,
  throttled,
  verifyFailure,
  verifyRequest,
} from './http-errors.js';
import {
  addressesOf,
  base64,
  endpointOf,
  formatAddress,
  idempotencyKey,
  METADATA_KEY,
  recipientGroups,
  requiredString,
  sendGroups,
  settingsBlock,
  type RecipientGroup,
} from './provider-mail.js';

/**
 * Resend over its API (resend.com/docs/api-reference/emails/send-email): `POST /emails` with
 * `Authorization: Bearer <api_key>` and an `Idempotency-Key` (our message id and a hash of the
 * recipients: a partial retry is another request, and the same key with another payload is a
 * 409); the answer's `id` is the provider's id (events' data.email_id).
 *
 * Settings (`service.settings.resend`): `api_key` (required), `endpoint` (default `https://api.resend.com`).
 * Credentials test: `GET /domains`. A sending-only key answers 401 `restricted_api_key` there,
 * which proves the key exists and may send: the test passes.
 *
 * Error mapping (the body's `name`, from resend.com/docs/api-reference/errors):
 *
 * Condition → outcome — Resend's wording:
 * - 429 `rate_limit_exceeded` → deferred, not before `retry-after`, pacing slowed — "Too many requests… read the response headers
 *   and reduce the rate"
 * - 429 `daily_quota_exceeded` → deferred until the reset (`retry-after`/`ratelimit-reset`, else 24 h) — "You have reached your
 *   daily email sending quota… wait until 24 hours have passed"
 * - 429 `monthly_quota_exceeded` → held_service_error — "…monthly email sending quota. Upgrade your plan"
 * - 5xx (`application_error`, `internal_server_error`), 409 `concurrent_idempotent_requests`; timeouts, connection errors →
 *   deferred — "Try the request again later"
 * - 401 `missing_api_key`, `restricted_api_key`, "API key is invalid" (400/401); 403 `invalid_api_key` → held_service_error —
 *   "Missing API key…" / "This API key is restricted to only send emails" / "API key is invalid"
 * - 403 `validation_error` "domain is not verified" / "only send testing emails"; `invalid_from_address` (403/422) →
 *   held_service_error (test reason `unverified_sender`) — "…add and verify your domain" / "Invalid from field"
 * - 451 `security_error` → held_service_error — "We may have found a security issue with the request… Contact support."
 * - 400/422 `validation_error` about `to`/`cc`/`bcc` → failed (no suppression: a malformed address, not a hard bounce); when the
 *   message names some of the recipients, only those fail and the others are deferred — "Invalid `to` field…"
 * - 409 `invalid_idempotent_request` → failed — "Same idempotency key used with a different request payload."
 * - other 4xx (`missing_required_field`, `invalid_attachment`, `not_found`, …) → failed
 * - a redirect (3xx) → held_service_error — the endpoint is not Resend's API
 */

const DEFAULT_ENDPOINT = 'https://api.resend.com';
const DAY_MS = 24 * 60 * 60_000;

const KEY_PROBLEMS = new Set(['missing_api_key', 'restricted_api_key', 'invalid_api_key']);
const UNVERIFIED = /not verified|verify your domain|only send testing emails/i;
const RECIPIENT_FIELD = /[`'"]?\b(?:to|cc|bcc)\b[`'"]?\s*(?:field|address)|\b(?:to|cc|bcc)\[\d+\]/i;

export function isUnverifiedSender(res: ProviderResponse): boolean {
  const json = jsonObject(res.body);
  const name = json !== undefined ? str(json.name) : undefined;
  const text = (json !== undefined ? str(json.message) : undefined) ?? '';
  return name === 'invalid_from_address' || (res.status === 403 && name === 'validation_error' && UNVERIFIED.test(text));
}

/** How one Resend answer that is not a success is treated (the table above). */
export function classifyResend(res: ProviderResponse, recipients: readonly string[], now: number): DeliveryError {
  const status = res.status;
  const json = jsonObject(res.body);
  const name = json !== undefined ? str(json.name) : undefined;
  const text = (json !== undefined ? str(json.message) : undefined) ?? describe(status, res.body);
  const message = `resend ${status}${name !== undefined ? ` ${name}` : ''}: ${text}`.slice(0, 500);
  if (status === 429) {
    if (name === 'monthly_quota_exceeded') return service(message);
    if (name === 'daily_quota_exceeded') {
      const wait = retryAfterMs(res.headers, now, DAY_MS) ?? retryAfterMs(res.headers, now, DAY_MS, 'ratelimit-reset') ?? DAY_MS;
      return throttled(message, wait);
    }
    return throttled(message, retryAfterMs(res.headers, now));
  }
  if (status >= 500) return temporary(message, retryAfterMs(res.headers, now));
  if (status === 409)
    return name === 'concurrent_idempotent_requests' ? temporary(message, retryAfterMs(res.headers, now)) : permanent(message);
  if (name !== undefined && KEY_PROBLEMS.has(name)) return service(message);
  if (/api key is invalid/i.test(text) || status === 401) return service(message);
  if (isUnverifiedSender(res) || status === 451 || status === 403) return service(message);
  if ((status === 400 || status === 422) && name === 'validation_error' && RECIPIENT_FIELD.test(text)) {
    const lower = text.toLowerCase();
    return invalidRecipients(
      message,
      recipients.filter((r) => lower.includes(r.toLowerCase())),
      recipients,
    );
  }
  if (status >= 300 && status < 400)
    return service(
      `resend ${status}: the endpoint redirects ` +
        `(${header(res.headers, 'location') ?? 'no location'}); check the service's resend.endpoint`,
    );
  return permanent(message);
}

function bodyOf(mail: OutgoingEmail, group: RecipientGroup): string {
  const e = mail.email;
  const list = (a: RecipientGroup['to']) => a.map(formatAddress);
  return JSON.stringify({
    from: formatAddress(e.from),
    to: list(group.to),
    ...(group.cc.length > 0 ? { cc: list(group.cc) } : {}),
    ...(group.bcc.length > 0 ? { bcc: list(group.bcc) } : {}),
    ...(e.reply_to.length > 0 ? { reply_to: list(e.reply_to) } : {}),
    subject: e.subject,
    ...(e.html !== '' ? { html: e.html } : {}),
    ...(e.text !== '' || e.html === '' ? { text: e.text } : {}),
    headers: headerObject(mail),
    ...(mail.attachments.length > 0
      ? {
          attachments: mail.attachments.map((a) => ({
            filename: a.filename,
            content: base64(a.content),
            ...(a.contentType !== undefined ? { content_type: a.contentType } : {}),
            ...(a.contentId !== undefined ? { content_id: a.contentId } : {}),
          })),
        }
      : {}),
    tags: [{ name: METADATA_KEY, value: mail.messageId }],
  });
}

export const resendTransport: TransportFactory = (svc): Transport => {
  const block = settingsBlock(svc, 'resend');
  const key = requiredString(block, 'resend', 'api_key');
  const endpoint = endpointOf(block, 'resend', DEFAULT_ENDPOINT);
  const http = createProviderHttp({ provider: 'resend' });
  const auth = `Bearer ${key}`;

  const sendGroup = async (mail: OutgoingEmail, group: RecipientGroup): Promise<DeliveryReceipt> => {
    const recipients = addressesOf(group);
    const res = await http.request({
      method: 'POST',
      url: `${endpoint}/emails`,
      body: bodyOf(mail, group),
      headers: {
        authorization: auth,
        'content-type': 'application/json',
        'idempotency-key': idempotencyKey(mail.messageId, recipients),
      },
    });
    const id = res.status === 200 || res.status === 201 ? str(jsonObject(res.body)?.id) : undefined;
    if (id !== undefined) return { response: `resend ${res.status} ${id}`, providerMessageId: id };
    if (res.status === 200 || res.status === 201)
      throw temporary(`resend ${res.status} without an id: ${describe(res.status, res.body)}`);
    throw classifyResend(res, recipients, Date.now());
  };

  return {
    // One group unless only Bcc recipients are owed: one request each (provider-mail.ts sendGroups).
    // A submitted message (SMTP) is parsed into these fields first (mime-to-json.ts).
    send: async (submitted) => {
      const mail = await structuredMail(submitted);
      return sendGroups('resend', recipientGroups(mail), (group) => sendGroup(mail, group));
    },
    async verify() {
      const res = await verifyRequest(http, {
        method: 'GET',
        url: `${endpoint}/domains`,
        headers: { authorization: auth, accept: 'application/json' },
      });
      if (res.status === 200) return;
      const name = str(jsonObject(res.body)?.name);
      if (res.status === 401 && name === 'restricted_api_key') return;
      const err = classifyResend(res, [], Date.now());
      const keyProblem =
        res.status === 401 ||
        res.status === 403 ||
        (name !== undefined && KEY_PROBLEMS.has(name)) ||
        /api key is invalid/i.test(err.message);
      throw verifyFailure(keyProblem && !isUnverifiedSender(res) ? 401 : res.status, err.message, isUnverifiedSender(res));
    },
    async close() {
      await http.close();
    },
  };
};
