import { IntakeMalformed, IntakeRejected, type ProviderEvent, type WebhookSourceHandler } from '../types.js';
import {
  checkFresh,
  digestKey,
  hmacSha256,
  isRecord,
  lower,
  ourMessageId,
  parseJsonBody,
  requiredSetting,
  secretsEqual,
  signedSeconds,
  str,
  timeOf,
  trimmed,
  SIGNATURE_TOLERANCE_MS,
} from './wire.js';

/**
 * Mailgun webhooks: the body's `signature` object is HMAC-SHA256(signing key, timestamp + token)
 * in hex. The signature does not cover `event-data`, so a captured request could be replayed
 * with another event inside the window: tokens are single-use (claimed durably before anything
 * is recorded) and timestamps older than 5 minutes are refused.
 */

/**
 * Claims a signature token once: true the first time, false when it was seen before. Durable
 * (a table), so a replay to another process or after a restart is still refused.
 */
export type ClaimToken = (source: string, token: string, expiresAt: number) => Promise<boolean>;

function verify(body: Record<string, unknown>, signingKey: string, now: number): string {
  const sig = body.signature;
  if (!isRecord(sig)) throw new IntakeRejected('no signature object');
  const token = str(sig.token);
  const signature = str(sig.signature);
  if (token === undefined || signature === undefined) throw new IntakeRejected('incomplete signature object');
  const timestamp = typeof sig.timestamp === 'number' ? String(sig.timestamp) : (str(sig.timestamp) ?? '');
  const at = signedSeconds(timestamp);
  const expected = hmacSha256(signingKey, timestamp + token).toString('hex');
  // A subaccount's event also carries `parent-signature` (the primary account's key signs it):
  // either matching the configured key is Mailgun's word.
  const parent = str(sig['parent-signature']);
  const ok =
    secretsEqual(signature.toLowerCase(), expected) || (parent !== undefined && secretsEqual(parent.toLowerCase(), expected));
  if (!ok) throw new IntakeRejected('signature does not match');
  checkFresh(at, now);
  return token;
}

export function parseMailgun(data: unknown, now: number): ProviderEvent[] {
  if (!isRecord(data)) throw new IntakeMalformed('event-data is missing or not an object.');
  const event = str(data.event);
  // No id (Mailgun always sends one, but the signature does not cover event-data): a digest of
  // the event stands in, so the one event is still recorded, once.
  const id = str(data.id) ?? digestKey('event', data);
  const message = isRecord(data.message) ? data.message : {};
  const headers = isRecord(message.headers) ? message.headers : {};
  const mailgunId = str(headers['message-id']);
  const messageId = ourMessageId(data['user-variables']);
  const status = isRecord(data['delivery-status']) ? data['delivery-status'] : {};
  const code = typeof status.code === 'number' || typeof status.code === 'string' ? String(status.code) : null;
  const base = {
    source: 'mailgun' as const,
    eventKey: id,
    at: timeOf(data.timestamp, now),
    recipient: lower(data.recipient),
    match: {
      ...(messageId === undefined ? {} : { messageId }),
      // Mailgun's id is the Message-ID header it sends with (ours when we set one).
      ...(mailgunId === undefined ? {} : { providerMessageId: mailgunId, headerMessageId: mailgunId }),
    },
    extra: { event: event ?? null },
  };
  switch (event) {
    case 'delivered':
      return [{ ...base, type: 'delivered', status: code, reason: trimmed(status.message) }];
    case 'failed': {
      const severity = str(data.severity);
      return [
        {
          ...base,
          type: 'bounced',
          bounceType: severity === 'permanent' ? 'hard' : 'soft',
          status: code,
          reason: trimmed(status.description) ?? trimmed(status.message) ?? trimmed(data.reason),
          extra: { ...base.extra, severity: severity ?? null, reason: str(data.reason) ?? null },
        },
      ];
    }
    case 'complained':
      return [{ ...base, type: 'complained' }];
    default:
      return [];
  }
}

/** Built with the store's token claim (src/events/sources/index.ts passes its SourceContext). */
export function mailgunSource({ claimToken }: { claimToken: ClaimToken }): WebhookSourceHandler {
  return {
    source: 'mailgun',
    async verifyAndParse(request, settings, now) {
      const body = parseJsonBody(request.rawBody);
      // Before verification an unreadable body is just an unsigned request.
      if (!isRecord(body)) throw new IntakeRejected('no signature object');
      const token = verify(body, requiredSetting(settings, 'signing_key'), now);
      const events = parseMailgun(body['event-data'], now);
      if (!(await claimToken('mailgun', token, now + 2 * SIGNATURE_TOLERANCE_MS)))
        throw new IntakeRejected('signature token already used');
      return { events };
    },
  };
}
