import type { Clock } from '../domain/clock.js';
import { countProviderEvents, type Metrics } from '../observability/metrics.js';
import type { Repos, Store } from '../storage/store.js';
import { applyToMessage, countApplied, type Recorded } from './apply.js';
import type { EventNotifier, ProviderEvent, RecordOutcome } from './types.js';

/**
 * The one place events after hand-off are recorded (issue 12), whatever brought them: a
 * provider's webhook (the intake calls this after verification, and answers 2xx only once it
 * resolved) or a DSN/ARF report that came back as mail. Per call, in ONE durable transaction:
 * deduplicate by (source, service, eventKey), store the event, match it to a message, append it
 * to the timeline, move the recipient's state and the message's status forward only
 * (precedence.ts), and suppress the recipient of a hard bounce or a complaint (apply.ts). An
 * event about a message the worker has not settled yet is applied by that settle (early.ts).
 * After the commit: counters, the warn line for unmatched events, and the notifier.
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

interface Applied {
  outcomes: RecordOutcome[];
  recorded: Recorded[];
}

export async function recordProviderEvents(
  store: Store,
  deps: RecordDeps,
  scope: RecordScope,
  events: readonly ProviderEvent[],
): Promise<RecordOutcome[]> {
  if (events.length === 0) return [];
  const now = deps.clock.now();
  // Durable (the default): the caller acknowledges the provider only after this commit.
  const applied = await store.transaction((tx) => applyProviderEvents(tx, now, scope, events));
  afterCommit(deps, scope, events, applied);
  return applied.outcomes;
}

/** The transactional part, for a caller that brings its own transaction (then call nothing after). */
export async function applyProviderEvents(
  tx: Repos,
  now: number,
  scope: RecordScope,
  events: readonly ProviderEvent[],
): Promise<Applied> {
  const applied: Applied = { outcomes: [], recorded: [] };
  // Before any row lock: an event naming a provider id the worker is recording right now is
  // seen by that settle or sees its id (lockProviderIds).
  if (scope.orgId !== null) {
    const orgId = scope.orgId;
    const named = events.flatMap((e) =>
      e.match.providerMessageId !== undefined && e.match.providerMessageId !== ''
        ? [{ orgId, providerMessageId: e.match.providerMessageId }]
        : [],
    );
    await tx.providerEvents.lockProviderIds(named);
  }
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
      provider_message_id: event.match.providerMessageId ?? null,
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

function afterCommit(deps: RecordDeps, scope: RecordScope, events: readonly ProviderEvent[], applied: Applied): void {
  const { metrics } = deps;
  events.forEach((event, i) => {
    const outcome = applied.outcomes[i];
    if (outcome === undefined) return;
    countProviderEvents(metrics, event.source, outcome);
    if (outcome === 'unmatched') {
      // An alert, not a debug line: an event about mail we cannot find is a matching gap.
      deps.logger.warn(
        {
          source: event.source,
          org: scope.orgId,
          service: scope.serviceId,
          event_key: event.eventKey,
          type: event.type,
          match: event.match,
        },
        'provider event matches no message',
      );
    }
  });
  countApplied(metrics, applied.recorded);
  for (const r of applied.recorded) {
    // The outbound notifier (a later issue) sees every recorded event, after it is durable.
    try {
      deps.notifier?.notify({
        messageId: r.message.id,
        orgId: r.message.org_id,
        type: r.event.type,
        at: r.event.at,
        recipient: r.recipient,
        detail: r.detail,
      });
    } catch (err) {
      // The event is stored and applied; a notifier's trouble must not turn that into an error.
      deps.logger.warn({ err, message_id: r.message.id }, 'event notifier failed');
    }
  }
}
