import { createMetrics, type Metrics } from '../../../src/observability/metrics.js';
import { recordProviderEvents, type RecordScope } from '../../../src/events/record.js';
import type { EventNotifier, ProviderEvent } from '../../../src/events/types.js';
import type { Store } from '../../../src/storage/store.js';
import type { ManualClock } from '../../../src/domain/clock.js';
import { databaseOf } from '../db.js';
import { captureLogger } from '../delivery.js';

/** Recording as the intake does it, with a captured log, fresh metrics and a listening notifier. */
export function recorder(store: Store, clock: ManualClock, scope: RecordScope = { orgId: 'acme', serviceId: 'smtp' }) {
  const logger = captureLogger();
  const metrics: Metrics = createMetrics();
  const notified: Array<Parameters<EventNotifier['notify']>[0]> = [];
  const notifier: EventNotifier = {
    notify: (e) => {
      notified.push(e);
    },
  };
  return {
    logger,
    metrics,
    notified,
    record: (events: ProviderEvent[], as: RecordScope = scope) =>
      recordProviderEvents(store, { clock, metrics, logger, notifier }, as, events),
  };
}

let n = 0;

/** A provider event about message `id` (by our id unless `match` says otherwise). */
export function ev(
  type: ProviderEvent['type'],
  id: string,
  recipient: string | null,
  more: Partial<ProviderEvent> = {},
): ProviderEvent {
  n += 1;
  return {
    source: 'postmark',
    eventKey: `evt-${n}`,
    type,
    at: Date.UTC(2026, 0, 1, 1),
    recipient,
    match: { messageId: id },
    ...more,
  };
}

/** The suppression rows of an organization with the message that caused each. */
export async function suppressionRows(store: Store, orgId = 'acme') {
  return databaseOf(store)
    .selectFrom('suppressions')
    .select(['email', 'reason', 'message_id'])
    .where('org_id', '=', orgId)
    .orderBy('email')
    .execute();
}

/** Stored provider events, oldest first. */
export async function providerEventRows(store: Store) {
  return databaseOf(store)
    .selectFrom('provider_events')
    .select(['source', 'event_key', 'org_id', 'service_id', 'message_id', 'type', 'recipient'])
    .orderBy('received_at')
    .orderBy('event_key')
    .execute();
}

/** One counter's value for these labels, read from the registry. */
export async function counter(metrics: Metrics, name: string, labels: Record<string, string>): Promise<number> {
  const m = await metrics.registry.getSingleMetric(name)?.get();
  const v = m?.values.find((x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val));
  return v?.value ?? 0;
}
