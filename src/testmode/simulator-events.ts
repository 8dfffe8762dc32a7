import type { Clock } from '../domain/clock.js';
import { type RecordDeps, recordProviderEvents } from '../events/record.js';
import type { EventNotifier } from '../events/types.js';
import type { Store } from '../storage/store.js';

/**
 * The simulator's events after hand-off (issue 27 §3.4). The sandbox transport schedules them
 * (store.simulatorEvents, one row per recipient and type, idempotent by event key) when it
 * accepts a simulator address; this ticker records them through the very path a provider's
 * webhook takes (recordProviderEvents), with source `simulator`: precedence, suppression of
 * hard bounces and complaints, the timeline, `mailroom_provider_events_total{source="simulator"}`
 * and the signed, retried webhooks of the outbox are the providers' own, not a copy of them.
 */

export interface SimulatorTickerDeps {
  store: Store;
  clock: Clock;
  metrics: RecordDeps['metrics'];
  logger: { warn(obj: object, msg: string): void };
  notifier?: EventNotifier | undefined;
}

/**
 * Statuses in which a due event waits: the `sent` write is buffered (Outcomes.sent, 10 ms) and
 * a message still owed to some recipient is not settled, so recording now would put `delivered`
 * before `sent` on the timeline (and in the webhooks' order).
 */
const WAITING: ReadonlySet<string> = new Set(['queued', 'sending', 'held_service_error', 'held_no_credits']);
/** Statuses after which nothing was handed off: the scheduled events are dropped. */
const DROPPED: ReadonlySet<string> = new Set(['failed', 'discarded']);

export class SimulatorTicker {
  constructor(private readonly deps: SimulatorTickerDeps) {}

  /**
   * Records the events due at `now` (up to `limit`, oldest first); how many it recorded. A crash
   * between the record and the removal records the event again on the next round, and the
   * provider events' deduplication (source, scope `message:<id>`, event key) answers `duplicate`.
   */
  async runDue(now: number, limit = 100): Promise<number> {
    const { store } = this.deps;
    const due = await store.simulatorEvents.due(now, limit);
    if (due.length === 0) return 0;
    const drop: number[] = [];
    let recorded = 0;
    for (const row of due) {
      if (WAITING.has(row.message_status) || row.message_status.startsWith('held')) continue;
      if (!DROPPED.has(row.message_status)) {
        await recordProviderEvents(store, this.deps, { orgId: row.org_id, serviceId: null }, [
          {
            source: 'simulator',
            eventKey: row.event_key,
            type: row.type,
            at: now,
            recipient: row.recipient,
            ...(row.bounce_type === 'hard' ? { bounceType: 'hard' as const } : {}),
            ...(row.status !== null ? { status: row.status } : {}),
            ...(row.reason !== null ? { reason: row.reason } : {}),
            match: { messageId: row.message_id },
          },
        ]);
        recorded += 1;
      }
      drop.push(row.id);
    }
    if (drop.length > 0) await store.simulatorEvents.remove(drop);
    return recorded;
  }
}
