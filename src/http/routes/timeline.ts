import type { MessageEvent } from '../../domain/types.js';
import { iso } from '../time.js';

/**
 * One entry of a message's timeline as GET /v1/messages/{id} shows it (schema:
 * timeline-schema.ts): the stored event's common fields lifted to the top (recipient, reason,
 * provider, bounce_type, status), and the stored detail under `details` as before, so existing
 * readers keep working. A public key (a browser holding the status token) sees no address and no
 * remote text: see `publicView`.
 */
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * Event types whose `reason` is mailroom's own code (lease_expired, worker_stopped,
 * credits_added, operator, cancelled, …). Every other reason is, or quotes, a remote's text
 * ("550 5.1.1 <ada@example.org>… unknown", a DSN's diagnostic, a relay's login error).
 */
// Not `discarded`: a message discarded because its recipients were suppressed names them
// ("recipients suppressed: <addresses>"), which may be fixed or Bcc addresses.
const OWN_REASON_TYPES = new Set(['queued', 'held', 'released']);

/**
 * What a public key may see of a stored detail: an allowlist, not a blocklist, so a field a
 * source adds later (a provider's `extra`, a DSN's reported recipient, a relay's 250 reply)
 * stays private until someone decides otherwise.
 */
const PUBLIC_DETAIL_KEYS = new Set(['provider', 'bounce_type', 'status', 'hard', 'attempt', 'retry_at', 'simulated']);

function publicView(type: string, detail: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(detail).filter(([k]) => PUBLIC_DETAIL_KEYS.has(k) || (k === 'reason' && OWN_REASON_TYPES.has(type))),
  );
}

/**
 * `simulated`: the message went to a simulator address (issue 27), so every entry says
 * `details.simulated: true`. Read from the message's column, not stamped on each stored event:
 * a message's events have many writers (claim, outcomes, reaper, the simulator's record path).
 */
export function timelineEntry(e: MessageEvent, withAddresses: boolean, simulated = false) {
  const stored = simulated ? { ...e.detail, simulated: true } : e.detail;
  const details = stored === null ? null : withAddresses ? stored : publicView(e.type, stored);
  const d = details ?? {};
  // The worker's own hand-off bounce says `hard: true|false`; provider events say bounce_type.
  const bounceType =
    d.bounce_type === 'hard' || d.bounce_type === 'soft'
      ? d.bounce_type
      : e.type === 'bounced' && typeof d.hard === 'boolean'
        ? d.hard
          ? 'hard'
          : 'soft'
        : undefined;
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
