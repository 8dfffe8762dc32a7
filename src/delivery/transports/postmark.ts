import type { DeliveryError, DeliveryReceipt, OutgoingEmail, Refusal, Transport, TransportFactory } from '../transport.js';
import { createProviderHttp, type ProviderResponse } from './http-client.js';
import { headerObject, structuredMail } from './mime-to-json.js';
import {
  describe,
  isRecord,
  jsonObject,
  mailbox,
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
  METADATA_KEY,
  optionalString,
  recipientGroups,
  requiredString,
  sendGroups,
  settingsBlock,
  type RecipientGroup,
} from './provider-mail.js';

/**
 * Postmark over its Email API (postmarkapp.com/developer/api/email): `POST /email` with
 * `X-Postmark-Server-Token`; the answer's `MessageID` is the provider's id (its webhooks' MessageID).
 *
 * Settings (`service.settings.postmark`): `server_token` (required), `message_stream` (default
 * `outbound`), `endpoint` (default `https://api.postmarkapp.com`).
 * Credentials test: `GET /server` (read-only, authenticated by the same token).
 *
 * Error mapping (HTTP status and the body's `ErrorCode`, from Postmark's "API error codes"):
 *
 * Condition → outcome — Postmark's wording:
 * - HTTP 429, or ErrorCode 429 → deferred (Retry-After if given), pacing slowed — "Rate limit exceeded"
 * - HTTP 500, 503 (any 5xx), ErrorCode 100; timeouts, connection errors → deferred — "Service Unavailable: during planned service
 *   outages" / "Maintenance"
 * - HTTP 401, ErrorCode 10 → held_service_error — "Missing or incorrect API token in header"
 * - ErrorCode 400, 401 → held_service_error (test reason `unverified_sender`) — "Sender Signature not found" / "Sender signature
 *   not confirmed"
 * - ErrorCode 405, 412, 413 → held_service_error — "Not allowed to send" / "Account is pending" / "Account may not send"
 * - ErrorCode 406 → the listed addresses bounced and suppressed; the other recipients deferred — "…marked as inactive. Found
 *   inactive addresses: … Inactive recipients are ones that have generated a hard bounce or a spam complaint."
 * - HTTP 200, ErrorCode 0 naming inactive addresses → sent to the others (the MessageID kept); the listed addresses bounced and
 *   suppressed — "Message OK, but will not deliver to these inactive addresses: a@x, b@x. Inactive recipients are ones that have
 *   generated a hard bounce, a spam complaint, or a manual suppression."
 * - ErrorCode 300, 402, 403, 409, 411; HTTP 413 → failed — "Invalid email request" / "Invalid JSON" / "Incompatible JSON" / "JSON
 *   required" / "Forbidden attachment type" / "Payload Too Large"
 * - HTTP 403 without an ErrorCode (an HTML page) → held_service_error — the issue's rule for 401/403: Postmark's front end
 *   refusing this account or address ("contact us"); waiting does not help
 * - any other 4xx → failed
 * - a redirect (3xx) → held_service_error — the endpoint is not Postmark's API
 *
 * Inactive addresses (406, and the 200 above) are bounced and suppressed with the reason
 * `hard_bounce` whatever made Postmark deactivate them: its answer does not say which (a hard
 * bounce, a spam complaint, or an operator's manual suppression at Postmark), and Postmark
 * refuses the address until it is reactivated there in every case, so our suppression only
 * mirrors Postmark's (and spares the retries). Reactivating an address at Postmark: delete its
 * suppression here too.
 *
 * Only Bcc recipients owed (a retry): one request per address (provider-mail.ts sendGroups);
 * a request failing after another succeeded refuses only its own address.
 */

const DEFAULT_ENDPOINT = 'https://api.postmarkapp.com';

/** Postmark's ErrorCodes by outcome (see the table above). */
const SERVICE_CODES = new Set([10, 400, 401, 405, 412, 413]);
const UNVERIFIED_SENDER_CODES = new Set([400, 401]);

/**
 * The inactive list in the 406 and the 200 wording (the gem's Postmark::InactiveRecipientError
 * patterns, with the 200's "Inactive recipients are …" tail that its second pattern misses).
 */
const INACTIVE_PATTERNS = [
  /Found inactive addresses: (.+?)\.\s+Inactive/,
  /these inactive addresses: (.+?)\.?(?:\s+Inactive\b|$)/,
];

export function inactiveAddresses(message: string): string[] {
  for (const pattern of INACTIVE_PATTERNS) {
    const m = pattern.exec(message);
    if (m?.[1] !== undefined)
      return m[1]
        .split(',')
        .map((a) => a.trim())
        .filter((a) => a !== '');
  }
  return [];
}

/** How one Postmark answer that is not a success is treated (the table above). */
export function classifyPostmark(res: ProviderResponse, recipients: readonly string[], now: number): DeliveryError {
  const json = jsonObject(res.body);
  const code = json !== undefined && typeof json.ErrorCode === 'number' ? json.ErrorCode : undefined;
  const text = (json !== undefined ? str(json.Message) : undefined) ?? describe(res.status, res.body);
  const message = `postmark ${res.status}${code !== undefined ? ` ErrorCode ${code}` : ''}: ${text}`.slice(0, 500);
  const status = res.status;
  if (status === 429 || code === 429) return throttled(message, retryAfterMs(res.headers, now));
  if (status >= 500 || code === 100) return temporary(message, retryAfterMs(res.headers, now));
  if (status === 401 || (code !== undefined && SERVICE_CODES.has(code))) return service(message);
  if (code === 406) return mailbox(message, inactiveAddresses(text), recipients);
  if (status === 403 && code === undefined) return service(message);
  if (status >= 300 && status < 400)
    return service(
      `postmark ${status}: the endpoint redirects ` +
        `(${res.headers.location ?? 'no location'}); check the service's postmark.endpoint`,
    );
  return permanent(message);
}

/**
 * A 200 is a hand-off, but its Message may name inactive recipients Postmark will not deliver to
 * ("Message OK, but will not deliver to these inactive addresses: …", as django-anymail reads
 * it): those are refused as `mailbox` (bounced, suppressed), the others are sent.
 */
export function acceptedReceipt(id: string, message: string, recipients: readonly string[]): DeliveryReceipt {
  const inactive = new Set(inactiveAddresses(message).map((a) => a.toLowerCase()));
  const refused = recipients
    .filter((r) => inactive.has(r.toLowerCase()))
    .map((address): Refusal => ({ address, kind: 'mailbox', reason: `postmark 200 ErrorCode 0: ${message}`.slice(0, 500) }));
  return { response: `postmark 200 ${id}`, providerMessageId: id, ...(refused.length > 0 ? { refused } : {}) };
}

function bodyOf(mail: OutgoingEmail, group: RecipientGroup, stream: string): string {
  const e = mail.email;
  const list = (a: RecipientGroup['to']) => a.map(formatAddress).join(', ');
  return JSON.stringify({
    From: formatAddress(e.from),
    To: list(group.to),
    ...(group.cc.length > 0 ? { Cc: list(group.cc) } : {}),
    ...(group.bcc.length > 0 ? { Bcc: list(group.bcc) } : {}),
    ...(e.reply_to.length > 0 ? { ReplyTo: list(e.reply_to) } : {}),
    Subject: e.subject,
    ...(e.html !== '' ? { HtmlBody: e.html } : {}),
    // At least one body is required (ErrorCode 300): an empty text stands for none.
    ...(e.text !== '' || e.html === '' ? { TextBody: e.text } : {}),
    Headers: Object.entries(headerObject(mail)).map(([Name, Value]) => ({ Name, Value })),
    Attachments: mail.attachments.map((a) => ({
      Name: a.filename,
      Content: base64(a.content),
      ContentType: a.contentType ?? 'application/octet-stream',
      // An inline image of a submitted message (mime-to-json.ts), referenced as cid: in its HTML.
      ...(a.contentId !== undefined ? { ContentID: `cid:${a.contentId}` } : {}),
    })),
    Metadata: { [METADATA_KEY]: mail.messageId },
    MessageStream: stream,
  });
}

export const postmarkTransport: TransportFactory = (svc): Transport => {
  const block = settingsBlock(svc, 'postmark');
  const token = requiredString(block, 'postmark', 'server_token');
  const stream = optionalString(block, 'postmark', 'message_stream', 'outbound');
  const endpoint = endpointOf(block, 'postmark', DEFAULT_ENDPOINT);
  const http = createProviderHttp({ provider: 'postmark' });
  const headers = { accept: 'application/json', 'content-type': 'application/json', 'x-postmark-server-token': token };

  const sendGroup = async (mail: OutgoingEmail, group: RecipientGroup): Promise<DeliveryReceipt> => {
    const res = await http.request({ method: 'POST', url: `${endpoint}/email`, headers, body: bodyOf(mail, group, stream) });
    const json = jsonObject(res.body);
    const id = json !== undefined ? str(json.MessageID) : undefined;
    if (res.status === 200 && id !== undefined && (json?.ErrorCode ?? 0) === 0)
      return acceptedReceipt(id, str(json?.Message) ?? '', addressesOf(group));
    if (res.status === 200) throw temporary(`postmark 200 without a MessageID: ${describe(res.status, res.body)}`);
    throw classifyPostmark(res, addressesOf(group), Date.now());
  };

  return {
    // One group unless only Bcc recipients are owed (provider-mail.ts): then one request each.
    // A submitted message (SMTP) is parsed into these fields first (mime-to-json.ts).
    send: async (submitted) => {
      const mail = await structuredMail(submitted);
      return sendGroups('postmark', recipientGroups(mail), (group) => sendGroup(mail, group));
    },
    async verify() {
      const res = await verifyRequest(http, {
        method: 'GET',
        url: `${endpoint}/server`,
        headers: { accept: 'application/json', 'x-postmark-server-token': token },
      });
      if (res.status === 200 && isRecord(jsonObject(res.body))) return;
      const err = classifyPostmark(res, [], Date.now());
      const code = jsonObject(res.body)?.ErrorCode;
      const status = res.status === 200 ? 500 : code === 10 ? 401 : res.status;
      throw verifyFailure(status, err.message, typeof code === 'number' && UNVERIFIED_SENDER_CODES.has(code));
    },
    async close() {
      await http.close();
    },
  };
};
