import { createPublicKey, verify as verifySignature, type KeyObject } from 'node:crypto';
import { IntakeMalformed, IntakeRejected, type ProviderEvent, type WebhookSourceHandler } from '../types.js';
import {
  digestKey,
  isRecord,
  lower,
  ourMessageId,
  parseJsonBody,
  requiredSetting,
  signedSeconds,
  str,
  timeOf,
  trimmed,
} from './wire.js';

/**
 * SendGrid's Event Webhook with Signed Event Webhook on: an ECDSA P-256 signature (base64 DER)
 * in X-Twilio-Email-Event-Webhook-Signature over SHA-256 of the timestamp header followed by
 * the raw body, checked with the verification key from the console (`public_key`: base64 DER
 * SPKI as shown there, or PEM).
 *
 * Freshness: SendGrid retries a failed POST for up to 72 hours and does not say that a retry
 * is signed anew, so a 5-minute window could refuse its own retries and lose events. A
 * replayed batch can only bring events SendGrid already signed, which dedupe by sg_event_id.
 * So the timestamp is refused only when older than the 72-hour retry window (plus an hour) or
 * more than 5 minutes in the future.
 */

const MAX_AGE_MS = 73 * 3600_000;
const MAX_AHEAD_MS = 5 * 60_000;

export function sendgridKey(setting: string): KeyObject {
  let key: KeyObject;
  try {
    key = setting.includes('-----BEGIN')
      ? createPublicKey(setting)
      : createPublicKey({ key: Buffer.from(setting.replace(/\s+/g, ''), 'base64'), format: 'der', type: 'spki' });
  } catch {
    throw new IntakeRejected('events.public_key is not a public key');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new IntakeRejected('events.public_key is not an ECDSA P-256 key');
  }
  return key;
}

function verify(headers: Readonly<Record<string, string | undefined>>, raw: Buffer, key: KeyObject, now: number): void {
  const signature = headers['x-twilio-email-event-webhook-signature'];
  const timestamp = headers['x-twilio-email-event-webhook-timestamp'];
  if (signature === undefined || signature === '' || timestamp === undefined)
    throw new IntakeRejected('missing SendGrid signature headers');
  const at = signedSeconds(timestamp.trim());
  let ok = false;
  try {
    ok = verifySignature(
      'sha256',
      Buffer.concat([Buffer.from(timestamp.trim()), raw]),
      { key, dsaEncoding: 'der' },
      Buffer.from(signature.trim(), 'base64'),
    );
  } catch {
    ok = false;
  }
  if (!ok) throw new IntakeRejected('SendGrid signature does not match');
  if (at < now - MAX_AGE_MS || at > now + MAX_AHEAD_MS) throw new IntakeRejected('SendGrid signature timestamp is stale');
}

/** sg_message_id is the X-Message-Id SendGrid answered at hand-off plus a `.filter…` suffix. */
export const sendgridMessageId = (v: unknown): string | undefined => {
  const s = str(v);
  if (s === undefined) return undefined;
  const cut = s.indexOf('.filter');
  return cut > 0 ? s.slice(0, cut) : s;
};

const TYPES: Readonly<Record<string, ProviderEvent['type']>> = {
  delivered: 'delivered',
  bounce: 'bounced',
  deferred: 'deferred',
  dropped: 'failed',
  spamreport: 'complained',
};

/** One batch → events; kinds we do not follow (processed, open, click, …) are skipped. */
export function parseSendgrid(body: unknown, now: number): ProviderEvent[] {
  if (!Array.isArray(body)) throw new IntakeMalformed('The body is not a SendGrid event batch.');
  const events: ProviderEvent[] = [];
  for (const item of body) {
    if (!isRecord(item)) throw new IntakeMalformed('A SendGrid event is not an object.');
    const kind = str(item.event) ?? '';
    const type = TYPES[kind];
    if (type === undefined) continue;
    // An event without sg_event_id is still recorded (once) under a digest of itself: one odd
    // event must not refuse the batch, which SendGrid would retry, and lose, whole.
    const key = str(item.sg_event_id) ?? digestKey('event', item);
    const providerMessageId = sendgridMessageId(item.sg_message_id);
    const headerMessageId = str(item['smtp-id']);
    // Custom args arrive as top-level fields of the event.
    const messageId = ourMessageId(item);
    const event: ProviderEvent = {
      source: 'sendgrid',
      eventKey: key,
      type,
      at: timeOf(item.timestamp, now),
      recipient: lower(item.email),
      status: str(item.status) ?? null,
      reason: trimmed(item.reason) ?? trimmed(item.response),
      match: {
        ...(messageId === undefined ? {} : { messageId }),
        ...(providerMessageId === undefined ? {} : { providerMessageId }),
        ...(headerMessageId === undefined ? {} : { headerMessageId }),
      },
      extra: { event: kind },
    };
    if (type === 'bounced') {
      // `type`: bounce = the address was refused for good (hard); blocked = the receiver
      // refused this message for now (soft).
      const bounceType = str(item.type);
      event.bounceType = bounceType === 'blocked' ? 'soft' : 'hard';
      event.extra = { ...event.extra, type: bounceType ?? null, classification: str(item.bounce_classification) ?? null };
    }
    if (type === 'deferred' && typeof item.attempt !== 'undefined')
      event.extra = { ...event.extra, attempt: String(item.attempt) };
    events.push(event);
  }
  return events;
}

export const sendgridSource: WebhookSourceHandler = {
  source: 'sendgrid',
  async verifyAndParse(request, settings, now) {
    verify(request.headers, request.rawBody, sendgridKey(requiredSetting(settings, 'public_key')), now);
    return { events: parseSendgrid(parseJsonBody(request.rawBody), now) };
  },
};
