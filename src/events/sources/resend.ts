import { IntakeMalformed, IntakeRejected, type ProviderEvent, type WebhookSourceHandler } from '../types.js';
import {
  checkFresh,
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
} from './wire.js';

/**
 * Resend webhooks, signed by Svix: HMAC-SHA256 over `${svix-id}.${svix-timestamp}.${raw body}`
 * with the base64 key after `whsec_`, sent base64 in `svix-signature` as space-separated
 * `v1,<sig>` entries (several while a secret rotates: any one matching is enough). The
 * timestamp must be within 5 minutes; `svix-id` is the event's id, so a replay inside the
 * window is at worst a duplicate.
 */

function svixKey(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  if (key.length === 0) throw new IntakeRejected('events.secret is not a whsec_ key');
  return key;
}

function verify(headers: Readonly<Record<string, string | undefined>>, raw: Buffer, secret: string, now: number): string {
  const id = headers['svix-id'];
  const timestamp = headers['svix-timestamp'];
  const signatures = headers['svix-signature'];
  if (id === undefined || id === '' || timestamp === undefined || signatures === undefined)
    throw new IntakeRejected('missing Svix headers');
  const at = signedSeconds(timestamp.trim());
  const expected = hmacSha256(svixKey(secret), Buffer.concat([Buffer.from(`${id}.${timestamp.trim()}.`), raw])).toString(
    'base64',
  );
  let ok = false;
  for (const entry of signatures.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    // No early exit: every entry costs the same whether an earlier one matched.
    if (secretsEqual(entry.slice(comma + 1), expected)) ok = true;
  }
  if (!ok) throw new IntakeRejected('no Svix signature matches');
  checkFresh(at, now);
  return id;
}

const TYPES: Readonly<Record<string, ProviderEvent['type']>> = {
  'email.delivered': 'delivered',
  'email.bounced': 'bounced',
  'email.complained': 'complained',
  'email.delivery_delayed': 'deferred',
};

export function parseResend(body: unknown, eventId: string, now: number): ProviderEvent[] {
  if (!isRecord(body) || !isRecord(body.data)) throw new IntakeMalformed('The body is not a Resend event.');
  const type = TYPES[str(body.type) ?? ''];
  if (type === undefined) return [];
  const data = body.data;
  const emailId = str(data.email_id);
  const messageId = ourMessageId(data.tags);
  // `to` lists every recipient of the email; the event is about one only when it names one.
  const to = Array.isArray(data.to) ? data.to : [data.to];
  const recipient = to.length === 1 ? lower(to[0]) : null;
  const bounce = isRecord(data.bounce) ? data.bounce : undefined;
  const event: ProviderEvent = {
    source: 'resend',
    eventKey: eventId,
    type,
    at: timeOf(body.created_at, now),
    recipient,
    match: {
      ...(messageId === undefined ? {} : { messageId }),
      ...(emailId === undefined ? {} : { providerMessageId: emailId }),
    },
    extra: { event: str(body.type) ?? null },
  };
  if (type === 'bounced') {
    // Resend passes SES's classification through: Permanent = hard, Transient/Undetermined = soft.
    event.bounceType = str(bounce?.type) === 'Permanent' ? 'hard' : 'soft';
    event.reason = trimmed(bounce?.message);
    event.extra = { ...event.extra, bounce_type: str(bounce?.type) ?? null, bounce_subtype: str(bounce?.subType) ?? null };
  }
  return [event];
}

export const resendSource: WebhookSourceHandler = {
  source: 'resend',
  async verifyAndParse(request, settings, now) {
    const id = verify(request.headers, request.rawBody, requiredSetting(settings, 'secret'), now);
    return { events: parseResend(parseJsonBody(request.rawBody), id, now) };
  },
};
