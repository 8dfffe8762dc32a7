import { IntakeMalformed, IntakeRejected, type ProviderEvent, type WebhookSourceHandler } from '../types.js';
import {
  digestKey,
  isRecord,
  lower,
  ourMessageId,
  parseJsonBody,
  requiredSetting,
  secretsEqual,
  str,
  timeOf,
  trimmed,
} from './wire.js';

/**
 * Postmark webhooks (Delivery, Bounce, SpamComplaint). Postmark signs nothing: the webhook URL
 * carries HTTP Basic credentials (https://user:pass@…/v1/provider-events/<token>), checked here
 * against the service's `events.username`/`events.password` in constant time.
 */

/** Postmark bounce types that mean the address is gone or refuses us for good (it deactivates them). */
const HARD = new Set(['HardBounce', 'BadEmailAddress', 'ManuallyDeactivated']);
/**
 * Types that say nothing about delivering this message (auto-replies, list (un)subscribe mail,
 * relay tests, challenge mail, address-change notices, Postmark's own errors): no event.
 */
const NOT_A_BOUNCE = new Set([
  'AutoResponder',
  'Subscribe',
  'Unsubscribe',
  'OpenRelayTest',
  'ChallengeVerification',
  'AddressChange',
  'InboundError',
  'TemplateRenderingFailed',
]);

function checkBasicAuth(header: string | undefined, username: string, password: string): void {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (m === null) throw new IntakeRejected('no HTTP Basic credentials');
  const decoded = Buffer.from(m[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  const pass = colon < 0 ? '' : decoded.slice(colon + 1);
  // Both compared, always: which of the two was wrong is not told by the time either.
  const okUser = secretsEqual(user, username);
  const okPass = secretsEqual(pass, password);
  if (!(okUser && okPass)) throw new IntakeRejected('wrong HTTP Basic credentials');
}

function match(body: Record<string, unknown>): ProviderEvent['match'] {
  const providerMessageId = str(body.MessageID);
  const messageId = ourMessageId(body.Metadata);
  return { ...(messageId === undefined ? {} : { messageId }), ...(providerMessageId === undefined ? {} : { providerMessageId }) };
}

/** `raw`: the body's bytes, digested for a bounce without an ID (same retried bytes, same key). */
export function parsePostmark(body: unknown, now: number, raw?: Buffer): ProviderEvent[] {
  if (!isRecord(body)) throw new IntakeMalformed('The body is not a JSON object.');
  const recordType = str(body.RecordType);
  const extra = {
    record_type: recordType ?? null,
    ...(str(body.MessageStream) === undefined ? {} : { stream: str(body.MessageStream) ?? null }),
  };
  switch (recordType) {
    case 'Delivery':
      return [
        {
          source: 'postmark',
          // Delivery webhooks carry no id of their own; the same delivery retried is the same bytes.
          eventKey: digestKey('delivery', [body.MessageID, body.Recipient, body.DeliveredAt]),
          type: 'delivered',
          at: timeOf(body.DeliveredAt, now),
          recipient: lower(body.Recipient),
          reason: trimmed(body.Details),
          match: match(body),
          extra,
        },
      ];
    case 'Bounce':
    case 'SpamComplaint': {
      const kind = str(body.Type) ?? '';
      const id = typeof body.ID === 'number' || typeof body.ID === 'string' ? String(body.ID) : undefined;
      const complaint = recordType === 'SpamComplaint' || kind === 'SpamComplaint';
      if (!complaint && NOT_A_BOUNCE.has(kind)) return [];
      const base = {
        source: 'postmark' as const,
        eventKey: id === undefined ? digestKey(recordType, raw ?? body) : `${recordType}:${id}`,
        at: timeOf(body.BouncedAt, now),
        recipient: lower(body.Email),
        reason: trimmed(body.Details) ?? trimmed(body.Description),
        match: match(body),
        extra: { ...extra, postmark_type: kind || null },
      };
      if (complaint) return [{ ...base, type: 'complained' }];
      return [{ ...base, type: 'bounced', bounceType: HARD.has(kind) ? 'hard' : 'soft' }];
    }
    default:
      // Opens, clicks, subscription changes: not outcomes of delivery; answered 2xx, nothing kept.
      return [];
  }
}

export const postmarkSource: WebhookSourceHandler = {
  source: 'postmark',
  async verifyAndParse(request, settings, now) {
    checkBasicAuth(request.headers.authorization, requiredSetting(settings, 'username'), requiredSetting(settings, 'password'));
    return { events: parsePostmark(parseJsonBody(request.rawBody), now, request.rawBody) };
  },
};
