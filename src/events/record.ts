import { refundsCredit } from '../credits/refund-policy.js';
import type { Clock } from '../domain/clock.js';
import { countProviderEvents, type Metrics } from '../observability/metrics.js';
import type { MatchedMessage, StoredRecipient } from '../storage/provider-events.js';
import type { Repos, Store } from '../storage/store.js';
import { AFTER_HAND_OFF, recipientMovesTo, recipientStateFor, statusMovesTo, statusOfRecipients } from './precedence.js';
import type { EventNotifier, ProviderEvent, RecordOutcome } from './types.js';

/**
 * The one place events after hand-off are recorded (issue 12), whatever brought them: a
 * provider's webhook (the intake calls this after verification, and answers 2xx only once it
 * resolved) or a DSN/ARF report that came back as mail. Per call, in ONE durable transaction:
 * deduplicate by (source, service, eventKey), store the event, match it to a message, append it
 * to the timeline, move the recipient's state and the message's status forward only
 * (precedence.ts), and suppress the recipient of a hard bounce or a complaint. After the commit: counters, the
 * warn line for unmatched events, and the notifier.
 */

export interface RecordDeps {
  clock: Clock;
  metrics: Pick<Metrics, 'eventsDelivered' | 'eventsBounced' | 'eventsComplained' | 'providerEvents'>;
  logger: { warn(obj: object, msg: string): void };
  notifier?: EventNotifier;
}

/**
 * Who vouches for the events. A webhook names its service (and so its organization): only that
 * organization's messages can be matched. `orgId` null (a VERP token whose MAC names the
 * message): matched by our message id alone.
 */
export interface RecordScope {
  orgId: string | null;
  serviceId: string | null;
}

/** Remote texts are kept, trimmed: a diagnostic can be a whole transcript. */
const MAX_REASON = 1000;

interface Recorded {
  event: ProviderEvent;
  message: MatchedMessage;
  recipient: string | null;
  detail: Record<string, unknown>;
}

interface Applied {
  outcomes: RecordOutcome[];
  recorded: Recorded[];
}

export async function recordProviderEvents(store: Store, deps: RecordDeps, scope: RecordScope, events: readonly ProviderEvent[]): Promise<RecordOutcome[]> {
  if (events.length === 0) return [];
  const now = deps.clock.now();
  // Durable (the default): the caller acknowledges the provider only after this commit.
  const applied = await store.transaction((tx) => applyProviderEvents(tx, now, scope, events));
  afterCommit(deps, scope, events, applied);
  return applied.outcomes;
}

/** The transactional part, for a caller that brings its own transaction (then call nothing after). */
export async function applyProviderEvents(tx: Repos, now: number, scope: RecordScope, events: readonly ProviderEvent[]): Promise<Applied> {
  const applied: Applied = { outcomes: [], recorded: [] };
  for (const event of events) {
    const message = await tx.providerEvents.findMessage({ orgId: scope.orgId, ...event.match });
    const inserted = await tx.providerEvents.insertIfNew({
      source: event.source,
      scope: dedupeScope(scope, event),
      event_key: event.eventKey,
      service_id: scope.serviceId ?? message?.service_id ?? null,
      org_id: scope.orgId ?? message?.org_id ?? null,
      message_id: message?.id ?? null,
      type: event.type,
      recipient: event.recipient?.toLowerCase() ?? null,
      at: event.at,
      detail: JSON.stringify(event),
      received_at: now,
    });
    if (!inserted) {
      applied.outcomes.push('duplicate');
      continue;
    }
    if (message === undefined) {
      applied.outcomes.push('unmatched');
      continue;
    }
    applied.recorded.push(await applyToMessage(tx, now, event, message));
    applied.outcomes.push('recorded');
  }
  return applied;
}

/**
 * Whose event keys these are. A webhook's: its service's, so a tenant posting with its own valid
 * credentials cannot pre-claim another's keys (Postmark's bounce ids are sequential) and make
 * their real events count as duplicates. A DSN/ARF report's: the message its VERP token is MAC'd
 * to; a global scope would do for honest mail, but the report's key starts from its Message-ID
 * header, which whoever holds any token of their own could copy into a forged report.
 */
const dedupeScope = (scope: RecordScope, event: ProviderEvent): string =>
  scope.serviceId !== null ? `service:${scope.serviceId}` : `message:${event.match.messageId ?? ''}`;

/**
 * The recipient an event is about: the one it names, if the message has it; failing a name,
 * the message's only recipient that was sent to. Never an address outside the message, so no
 * event can suppress an arbitrary address.
 */
function recipientOf(event: Pick<ProviderEvent, 'recipient'>, recipients: readonly StoredRecipient[]): StoredRecipient | undefined {
  if (event.recipient !== null) {
    const wanted = event.recipient.trim().toLowerCase();
    return recipients.find((r) => r.email.toLowerCase() === wanted);
  }
  const sentTo = recipients.filter((r) => r.state !== 'suppressed');
  return sentTo.length === 1 ? sentTo[0] : undefined;
}

async function applyToMessage(tx: Repos, now: number, event: ProviderEvent, message: MatchedMessage): Promise<Recorded> {
  const recipients = await tx.providerEvents.recipients(message.id);
  const target = recipientOf(event, recipients);
  const reason = event.reason === undefined || event.reason === null ? undefined : event.reason.slice(0, MAX_REASON);
  const detail: Record<string, unknown> = {
    provider: event.source,
    ...(target !== undefined ? { recipient: target.email } : event.recipient !== null ? { recipient: event.recipient.toLowerCase() } : {}),
    ...(reason !== undefined ? { reason } : {}),
    ...(event.bounceType !== undefined ? { bounce_type: event.bounceType } : {}),
    ...(event.status !== undefined && event.status !== null ? { status: event.status } : {}),
    ...(event.extra !== undefined ? { extra: event.extra } : {}),
  };
  // Status first, then the event: its webhook deliveries carry the status it left the message in.
  await applyOutcome(tx, now, event, message, recipients, target, reason);
  await tx.messages.appendEvent(message.id, event.type, event.at, now, detail);

  // A hard bounce or a complaint: no later send tries the address (451 recipient_suppressed).
  const suppress = event.type === 'complained' ? 'complaint' : event.type === 'bounced' && event.bounceType !== 'soft' ? 'hard_bounce' : undefined;
  if (suppress !== undefined && target !== undefined) await tx.suppressions.add(message.org_id, target.email, suppress, now, message.id);
  return { event, message, recipient: target?.email ?? null, detail };
}

/**
 * The event's effect on its recipient's state and on the message's status. Per recipient,
 * forward only. While a retry is still owed to some recipients (the message is queued or
 * sending), states are the worker's: the event is on the timeline, no more, until the worker
 * settles the message and replays it (replayEarlyEvents).
 */
/** What an event's outcome depends on (a replayed event is read back as this much). */
type Outcome = Pick<ProviderEvent, 'type' | 'bounceType' | 'recipient' | 'reason'>;

async function applyOutcome(
  tx: Repos, now: number, event: Outcome, message: MatchedMessage, recipients: StoredRecipient[],
  target: StoredRecipient | undefined, reason: string | undefined,
): Promise<void> {
  const next = recipientStateFor(event);
  const afterHandOff = AFTER_HAND_OFF.includes(message.status);
  if (target !== undefined && next !== undefined && afterHandOff && recipientMovesTo(target.state, next)) {
    if (await tx.providerEvents.setRecipientState(message.id, target.email, target.state, next, reason ?? null, now)) target.state = next;
  }
  if (afterHandOff) {
    const status = statusOfRecipients(recipients.map((r) => r.state), message.status);
    if (statusMovesTo(message.status, status)) {
      const refund = refundsCredit(status, message.credit_taken);
      const moved = await tx.messages.transition(message.org_id, message.id, [message.status], status, now, refund ? { credit_taken: false } : {});
      if (moved) {
        if (refund) await tx.credits.refund(message.org_id);
        message.status = status;
        message.credit_taken = message.credit_taken && !refund;
      }
    }
  }
}

/**
 * Events that arrived while the message still owed a retry to some recipients (a delivery of
 * the accepted ones, reported while the refused ones waited) are on the timeline but moved
 * nothing. Once the worker settles the message as left (sent, bounced, failed), it calls this
 * in the same transaction: each stored event is applied again to states and status, forward
 * only, so nothing is applied twice in effect; timeline entries and suppressions already exist.
 */
export async function replayEarlyEvents(tx: Repos, messageId: string, now: number): Promise<void> {
  const stored = await tx.providerEvents.storedEvents(messageId);
  if (stored.length === 0) return;
  const message = await tx.providerEvents.findMessage({ orgId: null, messageId });
  if (message === undefined || !AFTER_HAND_OFF.includes(message.status)) return;
  const recipients = await tx.providerEvents.recipients(messageId);
  for (const text of stored) {
    const event = storedEvent(text);
    if (event === undefined) continue;
    const reason = event.reason === undefined || event.reason === null ? undefined : event.reason.slice(0, MAX_REASON);
    await applyOutcome(tx, now, event, message, recipients, recipientOf(event, recipients), reason);
  }
}

const EVENT_TYPES: ReadonlySet<string> = new Set<ProviderEvent['type']>(['delivered', 'bounced', 'complained', 'deferred', 'failed']);
const isEventType = (v: unknown): v is ProviderEvent['type'] => typeof v === 'string' && EVENT_TYPES.has(v);

/** A stored event as recorded (our own JSON), as much as its outcome needs; anything else is skipped. */
function storedEvent(text: string): Outcome | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || !('type' in v) || !isEventType(v.type)) return undefined;
  const recipient = 'recipient' in v && typeof v.recipient === 'string' ? v.recipient : null;
  const reason = 'reason' in v && typeof v.reason === 'string' ? v.reason : null;
  const bounceType = 'bounceType' in v && (v.bounceType === 'hard' || v.bounceType === 'soft') ? v.bounceType : undefined;
  return { type: v.type, recipient, reason, ...(bounceType !== undefined ? { bounceType } : {}) };
}

function afterCommit(deps: RecordDeps, scope: RecordScope, events: readonly ProviderEvent[], applied: Applied): void {
  const { metrics } = deps;
  events.forEach((event, i) => {
    const outcome = applied.outcomes[i];
    if (outcome === undefined) return;
    countProviderEvents(metrics, event.source, outcome);
    if (outcome === 'unmatched') {
      // An alert, not a debug line: an event about mail we cannot find is a matching gap.
      deps.logger.warn({ source: event.source, org: scope.orgId, service: scope.serviceId, event_key: event.eventKey, type: event.type, match: event.match },
        'provider event matches no message');
    }
  });
  for (const r of applied.recorded) {
    const source = r.event.source;
    if (r.event.type === 'delivered') metrics.eventsDelivered.inc({ source });
    else if (r.event.type === 'bounced') metrics.eventsBounced.inc({ source, type: r.event.bounceType ?? 'hard' });
    else if (r.event.type === 'complained') metrics.eventsComplained.inc({ source });
    // The outbound notifier (a later issue) sees every recorded event, after it is durable.
    try {
      deps.notifier?.notify({ messageId: r.message.id, orgId: r.message.org_id, type: r.event.type, at: r.event.at, recipient: r.recipient, detail: r.detail });
    } catch (err) {
      // The event is stored and applied; a notifier's trouble must not turn that into an error.
      deps.logger.warn({ err, message_id: r.message.id }, 'event notifier failed');
    }
  }
}
