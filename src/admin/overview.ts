import { creditStatus } from '../credits/balance.js';
import { countsByStatus, messageRates, type Rates } from '../domain/rates.js';
import type { KeyMode } from '../domain/types.js';
import { keyOf } from '../delivery/failover.js';
import type { BreakerStateName, Metrics } from '../observability/metrics.js';
import { iso } from '../http/time.js';
import { DAY_MS, type DayStatusCount } from '../storage/overview.js';
import type { Store } from '../storage/store.js';

/**
 * An organization's overview (the operator UI's first page, issue 15): messages per UTC day by
 * status, the queue, credits, held messages and each service's health. Plain reads, each from an
 * index (src/storage/overview.ts); nothing here writes.
 */

export const OVERVIEW_DAYS = [7, 30, 90] as const;
export type OverviewDays = (typeof OVERVIEW_DAYS)[number];

/**
 * The columns of a day. `accepted` counts every message created that day; the others, of those, how many are in that status now.
 */
export interface DayRow {
  date: string;
  accepted: number;
  delivered: number;
  bounced: number;
  complained: number;
  failed: number;
  held: number;
}

/** Which column a message's current status counts in, besides `accepted`. */
const COLUMN_OF: Readonly<Record<string, Exclude<keyof DayRow, 'date' | 'accepted'>>> = {
  delivered: 'delivered',
  bounced: 'bounced',
  complained: 'complained',
  failed: 'failed',
  held: 'held',
  held_service_error: 'held',
};

/** One row per UTC day from `firstDay` (days since the epoch), oldest first, zeros included. */
export function dailyRows(counts: readonly DayStatusCount[], firstDay: number, days: number): DayRow[] {
  const rows: DayRow[] = [];
  for (let i = 0; i < days; i++) {
    rows.push({
      date: iso((firstDay + i) * DAY_MS).slice(0, 10),
      accepted: 0,
      delivered: 0,
      bounced: 0,
      complained: 0,
      failed: 0,
      held: 0,
    });
  }
  for (const c of counts) {
    const row = rows[c.day - firstDay];
    if (row === undefined) continue;
    row.accepted += c.count;
    const column = COLUMN_OF[c.status];
    if (column !== undefined) row[column] += c.count;
  }
  return rows;
}

export interface RateRows {
  range: Rates;
  daily: Array<{ date: string } & Rates>;
}

/**
 * Delivery, bounce and complaint rates (src/domain/rates.ts) per UTC day from `firstDay`, oldest
 * first, zeros included (their rates null), and over the whole range: from the same day-by-status
 * counts as dailyRows, so they cost no query of their own.
 */
export function rateRows(counts: readonly DayStatusCount[], firstDay: number, days: number): RateRows {
  const byDay: DayStatusCount[][] = Array.from({ length: days }, () => []);
  for (const c of counts) byDay[c.day - firstDay]?.push(c);
  return {
    range: messageRates(countsByStatus(counts.filter((c) => c.day >= firstDay && c.day < firstDay + days))),
    daily: byDay.map((rows, i) => ({ date: iso((firstDay + i) * DAY_MS).slice(0, 10), ...messageRates(countsByStatus(rows)) })),
  };
}

/**
 * Where the breaker states come from. `shared`: the Redis breakers every worker on
 * MAILROOM_REDIS_URL uses. `process`: this process's own, which only a worker running in it
 * (`mailroom serve` without MAILROOM_WORKER=off) moves; elsewhere they read closed.
 */
export type BreakerScope = 'shared' | 'process';

export interface ServiceHealth {
  id: string;
  provider: string;
  default: boolean;
  breaker: BreakerStateName;
  breaker_scope: BreakerScope;
  last_error: { at: string; message: string; message_id: string | null } | null;
}

export interface OverviewDeps {
  store: Store;
  now: number;
  metrics: Pick<Metrics, 'breakers'>;
  breakerScope: BreakerScope;
}

async function breakerState(metrics: OverviewDeps['metrics'], key: string): Promise<BreakerStateName> {
  // No breakers wired (an app built without buildServices), or Redis unreachable: nothing is known to be open.
  const view = await metrics.breakers.view?.(key).catch(() => undefined);
  return view?.state ?? 'closed';
}

async function serviceHealth(deps: OverviewDeps, orgId: string): Promise<ServiceHealth[]> {
  const services = await deps.store.overview.services(orgId);
  return Promise.all(
    services.map(async (s) => {
      const [breaker, failure] = await Promise.all([
        breakerState(deps.metrics, keyOf({ org_id: orgId, id: s.id })),
        deps.store.overview.lastFailure(orgId, s.id),
      ]);
      return {
        id: s.id,
        provider: s.provider,
        default: s.isDefault,
        breaker,
        breaker_scope: deps.breakerScope,
        last_error:
          failure === undefined
            ? null
            : { at: iso(failure.at), message: failure.reason ?? failure.type, message_id: failure.messageId },
      };
    }),
  );
}

/**
 * The overview of an organization over the last `days` UTC days, today included. Counts, queue
 * and held messages are of one mode (issue 27), never mixed: live by default, so test traffic
 * never inflates the live page. Credits and the services' health are the organization's own.
 */
export async function organizationOverview(deps: OverviewDeps, orgId: string, days: OverviewDays, mode: KeyMode = 'live') {
  const { store, now } = deps;
  const today = Math.floor(now / DAY_MS);
  const firstDay = today - days + 1;
  const [credits, counts, queue, held, services, retrying] = await Promise.all([
    creditStatus(store, orgId),
    store.overview.dailyCounts(orgId, firstDay * DAY_MS, (today + 1) * DAY_MS, mode),
    store.overview.queue(orgId, now, mode),
    store.overview.held(orgId, mode),
    serviceHealth(deps, orgId),
    store.overview.retrying(orgId, mode),
  ]);
  const oldest = retrying.oldest;
  const { org_id: _org, credits: stored, unlimited, ...rest } = credits;
  // null: credits unlimited (issue 29); the UI shows "Unlimited" and no top-up.
  const balance = unlimited ? null : stored;
  return {
    organization_id: orgId,
    days,
    mode,
    generated_at: iso(now),
    daily: dailyRows(counts, firstDay, days),
    rates: rateRows(counts, firstDay, days),
    queue: {
      depth: queue.depth,
      oldest_due_at: queue.oldestDueAt === null ? null : iso(queue.oldestDueAt),
      oldest_due_age_seconds: queue.oldestDueAt === null ? null : Math.max(0, Math.floor((now - queue.oldestDueAt) / 1000)),
    },
    credits: { balance, ...rest },
    held_messages: held,
    retrying: {
      count: retrying.count,
      oldest:
        oldest === null
          ? null
          : {
              message_id: oldest.id,
              service_id: oldest.serviceId,
              created_at: iso(oldest.createdAt),
              attempts: oldest.attempts,
              next_attempt_at: oldest.nextAttemptAt === null ? null : iso(oldest.nextAttemptAt),
              last_error: oldest.lastError,
            },
    },
    services,
  };
}
