import { Type } from '@sinclair/typebox';
import type { MessageEvent } from '../../domain/types.js';
import { Timestamp } from '../schemas.js';
import { iso } from '../time.js';

/**
 * One entry of a message's timeline as GET /v1/messages/{id} shows it: the stored event's
 * common fields lifted to the top (recipient, reason, provider, bounce_type, status), and the
 * stored detail under `details` as before, so existing readers keep working. A public key (a
 * browser holding the status token) sees no address and no remote text: see `publicView`.
 */
export const TimelineEvent = Type.Object({
  type: Type.String({ description: 'queued, held, released, sending, sent, deferred, delivered, bounced, complained, failed, discarded, held_service_error' }),
  at: Timestamp,
  recipient: Type.Optional(Type.String({ description: 'The recipient the event is about, when it is about one (private-key reads only)' })),
  reason: Type.Optional(Type.String({
    description: "Why: the remote's reply or diagnostic text, or mailroom's reason. A public key sees only mailroom's own reasons (queued, held, released, discarded): a remote's text can quote addresses",
  })),
  provider: Type.Optional(Type.String({ description: 'Where an event after hand-off came from: ses, postmark, sendgrid, mailgun, resend, dsn, arf' })),
  bounce_type: Type.Optional(Type.Union([Type.Literal('hard'), Type.Literal('soft')])),
  status: Type.Optional(Type.String({ description: "The remote's status code (e.g. 5.1.1 or 550), when known" })),
  details: Type.Optional(Type.Object({}, {
    additionalProperties: true,
    description: 'The stored detail. A public key sees only provider, bounce_type, status, hard, attempt, retry_at and the reasons it may see',
  })),
});

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * Event types whose `reason` is mailroom's own code (lease_expired, worker_stopped,
 * credits_added, operator, cancelled, …). Every other reason is, or quotes, a remote's text
 * ("550 5.1.1 <ada@example.org>… unknown", a DSN's diagnostic, a relay's login error).
 */
const OWN_REASON_TYPES = new Set(['queued', 'held', 'released', 'discarded']);

/**
 * What a public key may see of a stored detail: an allowlist, not a blocklist, so a field a
 * source adds later (a provider's `extra`, a DSN's reported recipient, a relay's 250 reply)
 * stays private until someone decides otherwise.
 */
const PUBLIC_DETAIL_KEYS = new Set(['provider', 'bounce_type', 'status', 'hard', 'attempt', 'retry_at']);

function publicView(type: string, detail: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(detail).filter(([k]) => PUBLIC_DETAIL_KEYS.has(k) || (k === 'reason' && OWN_REASON_TYPES.has(type))));
}

export function timelineEntry(e: MessageEvent, withAddresses: boolean) {
  const details = e.detail === null ? null : withAddresses ? e.detail : publicView(e.type, e.detail);
  const d = details ?? {};
  // The worker's own hand-off bounce says `hard: true|false`; provider events say bounce_type.
  const bounceType = d.bounce_type === 'hard' || d.bounce_type === 'soft' ? d.bounce_type
    : e.type === 'bounced' && typeof d.hard === 'boolean' ? (d.hard ? 'hard' : 'soft') : undefined;
  const recipient = text(d.recipient);
  const reason = text(d.reason);
  const provider = text(d.provider);
  const status = text(d.status);
  return {
    type: e.type,
    at: iso(e.at),
    ...(recipient !== undefined ? { recipient } : {}),
    ...(reason !== undefined ? { reason } : {}),
    ...(provider !== undefined ? { provider } : {}),
    ...(bounceType !== undefined ? { bounce_type: bounceType } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(details !== null && Object.keys(details).length > 0 ? { details } : {}),
  };
}
