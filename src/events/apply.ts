import { refundsCredit } from '../credits/refund-policy.js';
import { canonicalAddress } from '../domain/addresses.js';
import { eventMaySuppress, suppressionFor } from '../domain/suppression-policy.js';
import type { Metrics } from '../observability/metrics.js';
import type { MatchedMessage, StoredRecipient } from '../storage/provider-events.js';
import type { Repos } from '../storage/store.js';
import { AFTER_HAND_OFF, recipientMovesTo, recipientStateFor, statusMovesTo, statusOfRecipients } from './precedence.js';
import { EVENT_SOURCES, type EventSource, type ProviderEvent } from './types.js';

/**
 * Applying one stored event to the message it matched, in the caller's transaction: what the
 * intake does at once (record.ts) and what a settle does for an event that arrived before its
 * message was settled (early.ts).
 */

/** Remote texts are kept, trimmed: a diagnostic can be a whole transcript. */
const MAX_REASON = 1000;

/** An event applied to its message: what the notifier and the counters see after the commit. */
export interface Recorded {
  event: ProviderEvent;
  message: MatchedMessage;
  recipient: string | null;
  detail: Record<string, unknown>;
}

/** What an event's outcome depends on (a replayed event is read back as this much). */
export type Outcome = Pick<ProviderEvent, 'type' | 'bounceType' | 'recipient' | 'reason'>;

const trimmedReason = (event: Pick<ProviderEvent, 'reason'>): string | undefined =>
  event.reason === undefined || event.reason === null ? undefined : event.reason.slice(0, MAX_REASON);

/**
 * The recipient an event is about: the one it names, if the message has it; failing a name,
 * the message's only recipient that was sent to. Never an address outside the message, so no
 * event can suppress an arbitrary address.
 */
function recipientOf(
  event: Pick<ProviderEvent, 'recipient'>,
  recipients: readonly StoredRecipient[],
): StoredRecipient | undefined {
  if (event.recipient !== null) {
    // canonicalAddress: a provider may name `zoë@exämple.com` by either form of its domain.
    const wanted = canonicalAddress(event.recipient);
    return recipients.find((r) => canonicalAddress(r.email) === wanted);
  }
  const sentTo = recipients.filter((r) => r.state !== 'suppressed');
  return sentTo.length === 1 ? sentTo[0] : undefined;
}

/**
 * The whole of an event's effect: the recipient's state and the message's status (forward
 * only), its timeline entry (whose webhook deliveries the outbox adds in this transaction), and
 * the suppression of a hard bounce's or a complaint's recipient.
 */
export async function applyToMessage(tx: Repos, now: number, event: ProviderEvent, message: MatchedMessage): Promise<Recorded> {
  const recipients = await tx.providerEvents.recipients(message.id);
  const target = recipientOf(event, recipients);
  const reason = trimmedReason(event);
  const detail: Record<string, unknown> = {
    provider: event.source,
    ...(target !== undefined
      ? { recipient: target.email }
      : event.recipient !== null
        ? { recipient: canonicalAddress(event.recipient) }
        : {}),
    ...(reason !== undefined ? { reason } : {}),
    ...(event.bounceType !== undefined ? { bounce_type: event.bounceType } : {}),
    ...(event.status !== undefined && event.status !== null ? { status: event.status } : {}),
    ...(event.extra !== undefined ? { extra: event.extra } : {}),
  };
  // Status first, then the event: its webhook deliveries carry the status it left the message in.
  await applyOutcome(tx, now, event, message, recipients, target, reason);
  await tx.messages.appendEvent(message.id, event.type, event.at, now, detail);

  // A hard bounce or a complaint: no later send tries the address (451 recipient_suppressed).
  // Which events, and which recipients, is the suppression policy's (suppressionFor, eventMaySuppress).
  // A `suppressed` recipient stays so whatever the event (precedence.ts), so its state is read after.
  if (target !== undefined && eventMaySuppress(target.state)) {
    const suppress = suppressionFor({ at: 'event', type: event.type, bounceType: event.bounceType });
    if (suppress !== undefined) await tx.suppressions.add(message.org_id, target.email, suppress, now, message.id);
  }
  return { event, message, recipient: target?.email ?? null, detail };
}

/**
 * An event's effect on states and status alone, for one whose timeline entry and suppression
 * were written when it arrived (early.ts replays those once the message is settled).
 */
export async function applyOutcomeOnly(
  tx: Repos,
  now: number,
  event: Outcome,
  message: MatchedMessage,
  recipients: StoredRecipient[],
): Promise<void> {
  await applyOutcome(tx, now, event, message, recipients, recipientOf(event, recipients), trimmedReason(event));
}

/**
 * The event's effect on its recipient's state and on the message's status. Per recipient,
 * forward only. While a retry is still owed to some recipients, or the attempt is not settled
 * (the message is queued or sending), states are the worker's: the event is on the timeline,
 * no more, until the worker settles the message and applies it (early.ts).
 */
async function applyOutcome(
  tx: Repos,
  now: number,
  event: Outcome,
  message: MatchedMessage,
  recipients: StoredRecipient[],
  target: StoredRecipient | undefined,
  reason: string | undefined,
): Promise<void> {
  const next = recipientStateFor(event);
  const afterHandOff = AFTER_HAND_OFF.includes(message.status);
  if (target !== undefined && next !== undefined && afterHandOff && recipientMovesTo(target.state, next)) {
    if (await tx.providerEvents.setRecipientState(message.id, target.email, target.state, next, reason ?? null, now))
      target.state = next;
  }
  if (afterHandOff) {
    const status = statusOfRecipients(
      recipients.map((r) => r.state),
      message.status,
    );
    if (statusMovesTo(message.status, status)) {
      const refund = refundsCredit(status, message.credit_taken);
      const moved = await tx.messages.transition(
        message.org_id,
        message.id,
        [message.status],
        status,
        now,
        refund ? { credit_taken: false } : {},
      );
      if (moved) {
        if (refund) await tx.credits.refund(message.org_id);
        message.status = status;
        message.credit_taken = message.credit_taken && !refund;
      }
    }
  }
}

/** The per-type counters of applied events (after their commit). */
export function countApplied(
  metrics: Pick<Metrics, 'eventsDelivered' | 'eventsBounced' | 'eventsComplained'>,
  recorded: readonly Recorded[],
): void {
  for (const r of recorded) {
    const source = r.event.source;
    if (r.event.type === 'delivered') metrics.eventsDelivered.inc({ source });
    else if (r.event.type === 'bounced') metrics.eventsBounced.inc({ source, type: r.event.bounceType ?? 'hard' });
    else if (r.event.type === 'complained') metrics.eventsComplained.inc({ source });
  }
}

const EVENT_TYPES: ReadonlySet<string> = new Set<ProviderEvent['type']>([
  'delivered',
  'bounced',
  'complained',
  'deferred',
  'failed',
]);
const isEventType = (v: unknown): v is ProviderEvent['type'] => typeof v === 'string' && EVENT_TYPES.has(v);
const isSource = (v: unknown): v is EventSource => typeof v === 'string' && (EVENT_SOURCES as readonly string[]).includes(v);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const optionalText = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * A stored event read back (provider_events.detail: our own JSON of the ProviderEvent), or
 * undefined for anything that is not one. `match` is not needed once the message is known.
 */
export function storedEvent(text: string, now: number): ProviderEvent | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(v) || !isEventType(v.type) || !isSource(v.source) || typeof v.eventKey !== 'string') return undefined;
  const extra: Record<string, string | number | boolean | null> = {};
  if (isRecord(v.extra)) {
    for (const [k, x] of Object.entries(v.extra)) {
      if (x === null || typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') extra[k] = x;
    }
  }
  return {
    source: v.source,
    eventKey: v.eventKey,
    type: v.type,
    at: typeof v.at === 'number' && Number.isFinite(v.at) ? v.at : now,
    recipient: optionalText(v.recipient),
    match: {},
    ...(v.bounceType === 'hard' || v.bounceType === 'soft' ? { bounceType: v.bounceType } : {}),
    ...(v.status !== undefined ? { status: optionalText(v.status) } : {}),
    ...(v.reason !== undefined ? { reason: optionalText(v.reason) } : {}),
    ...(isRecord(v.extra) ? { extra } : {}),
  };
}
