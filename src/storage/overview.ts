import { sql, type Kysely } from 'kysely';
import { type KeyMode, MESSAGE_STATUSES } from '../domain/types.js';
import { RETRYING } from './history.js';
import { bool } from './json.js';
import type { Database } from './schema.js';

/**
 * The reads behind an organization's overview (the operator UI's first page), each served from
 * an index so the page stays fast with 100,000 messages and more (README, Operator UI):
 * - counts per UTC day and status: the covering index messages_org_status_time (org_id,
 *   status, created_at, id), every status named so the planner walks it per status instead of
 *   reading each row of messages_org_time for its status;
 * - the queue: the org's queued rows of the same index;
 * - each service's last failure: messages_org_service_error (migration 0008, only rows with a
 *   last_error), then those messages' events (events_message).
 *
 * Live and test never mix (issue 27). `mode` left out reads both, as before. Test counts walk
 * messages_test (migration 0015, test rows only; `mode = 'test'` a literal so SQLite matches
 * it); live counts are all − test, so the covering index keeps serving them with no mode column
 * added to it (a `mode = 'live'` filter would read every row of the range).
 */

/** `mode = ?` as a literal (see above); undefined: no filter. */
function modeIs(mode: KeyMode | undefined) {
  if (mode === undefined) return undefined;
  return mode === 'test' ? sql<boolean>`mode = 'test'` : sql<boolean>`mode = 'live'`;
}

function subtract(all: readonly DayStatusCount[], test: readonly DayStatusCount[]): DayStatusCount[] {
  const minus = new Map(test.map((t) => [`${t.day}:${t.status}`, t.count]));
  return all.map((a) => ({ ...a, count: a.count - (minus.get(`${a.day}:${a.status}`) ?? 0) })).filter((a) => a.count > 0);
}

export const DAY_MS = 86_400_000;

export interface DayStatusCount {
  /** Days since the epoch (UTC). */
  day: number;
  status: string;
  count: number;
}

export interface QueueView {
  depth: number;
  /** The earliest next_attempt_at among queued messages already due; null when none is. */
  oldestDueAt: number | null;
}

export interface ServiceRow {
  id: string;
  provider: string;
  isDefault: boolean;
}

/** The overview counts retrying messages up to this many (an outage of a large sender: "100000 or more"). */
export const RETRYING_COUNT_CAP = 100_000;

/** Messages queued or sending after a failed attempt (src/storage/history.ts RETRYING), and the oldest of them. */
export interface RetryingView {
  count: number;
  oldest: {
    id: string;
    serviceId: string;
    createdAt: number;
    attempts: number;
    nextAttemptAt: number | null;
    lastError: string;
  } | null;
}

export interface FailureEvent {
  messageId: string;
  type: string;
  at: number;
  reason: string | null;
}

/** Events that say a service did not take a message: a retry, a give-up, a hold on its error. */
export const FAILURE_EVENTS = ['failed', 'deferred', 'held_service_error'] as const;
/** Message statuses a service failure leaves behind (queued: waiting for its retry). */
const FAILURE_STATUSES = ['queued', 'failed', 'held_service_error'] as const;
/** Messages with a failure looked at per service: the newest failure is among them unless bounces crowd them out. */
const CANDIDATES = 10;

/** The event's `reason`; a detail that cannot be read shows none rather than failing the page. */
function reasonOf(detail: string | null): string | null {
  if (detail === null) return null;
  try {
    const d: unknown = JSON.parse(detail);
    return typeof d === 'object' && d !== null && 'reason' in d && typeof d.reason === 'string' ? d.reason : null;
  } catch {
    return null;
  }
}

export function overviewRepo(db: Kysely<Database>) {
  return {
    /** Messages created in [from, to) per UTC day and status, of one mode or (undefined) both. */
    async dailyCounts(orgId: string, from: number, to: number, mode?: KeyMode): Promise<DayStatusCount[]> {
      const counts = async (testOnly: boolean): Promise<DayStatusCount[]> => {
        const day = sql<number>`created_at / ${sql.lit(DAY_MS)}`;
        let q = db
          .selectFrom('messages')
          .select([day.as('day'), 'status', (eb) => eb.fn.countAll<number>().as('n')])
          .where('org_id', '=', orgId);
        // The test walk is messages_test's; naming every status would steer it to the status index.
        q = testOnly ? q.where(sql<boolean>`mode = 'test'`) : q.where('status', 'in', MESSAGE_STATUSES);
        const rows = await q.where('created_at', '>=', from).where('created_at', '<', to).groupBy([day, 'status']).execute();
        return rows.map((r) => ({ day: Number(r.day), status: r.status, count: Number(r.n) }));
      };
      if (mode === 'test') return counts(true);
      const all = await counts(false);
      return mode === 'live' ? subtract(all, await counts(true)) : all;
    },

    /** Queued messages of the organization and the earliest one due at `now`. */
    async queue(orgId: string, now: number, mode?: KeyMode): Promise<QueueView> {
      let q = db
        .selectFrom('messages')
        .select((eb) => [
          eb.fn.countAll<number>().as('depth'),
          eb.fn.min<number>(eb.case().when('next_attempt_at', '<=', now).then(eb.ref('next_attempt_at')).end()).as('oldest'),
        ])
        .where('org_id', '=', orgId)
        .where('status', '=', 'queued');
      const byMode = modeIs(mode);
      if (byMode !== undefined) q = q.where(byMode);
      const row = await q.executeTakeFirstOrThrow();
      return { depth: Number(row.depth), oldestDueAt: row.oldest === null ? null : Number(row.oldest) };
    },

    /** Messages held for credits or for their service's error (at most hold_queue_limit + service holds). */
    async held(orgId: string, mode?: KeyMode): Promise<number> {
      let q = db
        .selectFrom('messages')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', orgId)
        .where('status', 'in', ['held', 'held_service_error']);
      const byMode = modeIs(mode);
      if (byMode !== undefined) q = q.where(byMode);
      const row = await q.executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /**
     * Retrying messages (see RetryingView): their count and the oldest, both from the partial
     * index messages_org_retrying (migration 0018), which holds only them.
     */
    async retrying(orgId: string, mode?: KeyMode): Promise<RetryingView> {
      let q = db
        .selectFrom('messages')
        .select(['id', 'service_id', 'created_at', 'attempts', 'next_attempt_at', 'last_error'])
        .where('org_id', '=', orgId)
        .where(RETRYING[0])
        .where(RETRYING[1]);
      const byMode = modeIs(mode);
      if (byMode !== undefined) q = q.where(byMode);
      // Both in time order: a plain count made SQLite walk messages_org_status_time (2 × 330
      // rows by 0011's figures, read whole, against the partial index's few).
      const walk = q.orderBy('created_at', 'asc').orderBy('id', 'asc');
      const [first, counted] = await Promise.all([
        walk.limit(1).executeTakeFirst(),
        db
          .selectFrom(walk.clearSelect().select('id').limit(RETRYING_COUNT_CAP).as('r'))
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
      ]);
      return {
        count: Number(counted.n),
        oldest:
          first === undefined
            ? null
            : {
                id: first.id,
                serviceId: first.service_id,
                createdAt: Number(first.created_at),
                attempts: Number(first.attempts),
                nextAttemptAt: first.next_attempt_at === null ? null : Number(first.next_attempt_at),
                lastError: first.last_error ?? '',
              },
      };
    },

    /** The organization's services, their settings unread (a damaged row must not hide the page). */
    async services(orgId: string): Promise<ServiceRow[]> {
      const rows = await db
        .selectFrom('services')
        .select(['id', 'provider', 'is_default'])
        .where('org_id', '=', orgId)
        .orderBy('id')
        .execute();
      return rows.map((r) => ({ id: r.id, provider: r.provider, isDefault: bool(r.is_default) }));
    },

    /**
     * The newest failure event of the service's messages: among its latest messages that carry
     * an error (the partial index), the latest failed/deferred/held_service_error event.
     */
    async lastFailure(orgId: string, serviceId: string): Promise<FailureEvent | undefined> {
      const candidates = await db
        .selectFrom('messages')
        .select('id')
        .where('org_id', '=', orgId)
        .where('service_id', '=', serviceId)
        .where('last_error', 'is not', null)
        .where('status', 'in', FAILURE_STATUSES)
        .orderBy('updated_at', 'desc')
        .limit(CANDIDATES)
        .execute();
      if (candidates.length === 0) return undefined;
      const e = await db
        .selectFrom('message_events')
        .select(['message_id', 'type', 'at', 'detail'])
        .where(
          'message_id',
          'in',
          candidates.map((c) => c.id),
        )
        .where('type', 'in', FAILURE_EVENTS)
        .orderBy('at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      return e === undefined
        ? undefined
        : { messageId: e.message_id, type: e.type, at: Number(e.at), reason: reasonOf(e.detail) };
    },
  };
}
