import { sql, type Kysely, type Selectable } from 'kysely';
import { webhookIdOf } from '../webhooks/payload.js';
import type { WebhookAttemptView, WebhookDeliveryState, WebhookDeliveryView } from '../webhooks/types.js';
import type { Dialect } from './dialect.js';
import type { Database, WebhookDeliveriesTable } from './schema.js';
import { fanOut } from './webhook-outbox.js';

/**
 * The delivery log of outbound webhooks (issue 13): reads (newest first, each delivery with its
 * attempts), replays, and the `webhook.test` rows. Part of the `webhookDeliveries` repo.
 */

export interface DeliveryFilter {
  endpointId?: string;
  eventType?: string;
  messageId?: string;
  state?: WebhookDeliveryState;
  /** A `whd_` id: the page continues with older deliveries. */
  before?: string;
}

/** The number in `whd_<n>`; undefined for anything else. */
export function parseDeliveryId(id: string): number | undefined {
  const m = /^whd_([1-9]\d{0,15})$/.exec(id);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

/** An attempt's logged headers (a JSON object of strings, written by recordAttempt); anything else reads as none. */
function loggedHeaders(column: string | null): Record<string, string> | null {
  if (column === null) return null;
  try {
    const parsed: unknown = JSON.parse(column);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return null;
  }
}

function stateOf(s: string): WebhookDeliveryState {
  return s === 'succeeded' || s === 'failed' ? s : 'pending';
}

const DAY_MS = 86_400_000;
/** A range replay spans at most 31 days: a month of events at once, not a year's by a typo. */
export const REPLAY_MAX_RANGE_MS = 31 * DAY_MS;
/** A range replay looks at messages created at most 7 days before `since` (an event comes within days of its message). */
export const REPLAY_LOOKBACK_MS = 7 * DAY_MS;
/** Messages per statement of a range replay: under the parameter limits, short write locks. */
const REPLAY_SLICE = 500;

/** A range replay asked for more than 31 days (REPLAY_MAX_RANGE_MS): callers answer 400 naming since/until. */
export class ReplayRangeTooLong extends Error {
  constructor() {
    super('since and until may be at most 31 days apart');
    this.name = 'ReplayRangeTooLong';
  }
}

/**
 * What a single replay did: `queued` (due now), `in_flight` (being sent now: left to finish,
 * nothing changed), `not_found`. `endpointEnabled` false: it waits until the endpoint is
 * enabled again.
 */
export type ReplayOneResult =
  | { outcome: 'not_found' }
  /** A `webhook.test` delivery: sent once, when asked for, and never queued (the dispatcher claims message and alert events). */
  | { outcome: 'test_event' }
  | { outcome: 'queued' | 'in_flight'; endpointId: string; endpointEnabled: boolean };

/** Deliveries not in flight now: a replay must not let a second send start beside the one under way. */
const notInFlight = (now: number) => sql<boolean>`not (state = 'pending' and lease_until is not null and lease_until >= ${now})`;

export function deliveryLog(db: Kysely<Database>, dialect: Dialect) {
  /** One slice of a range replay: the existing deliveries again, then the missing ones. */
  const replaySlice = async (
    orgId: string,
    endpointId: string,
    messageIds: string[],
    range: { since: number; until: number; onlyFailed: boolean },
    now: number,
  ): Promise<number> => {
    let reset = db
      .updateTable('webhook_deliveries')
      .set({ state: 'pending', next_attempt_at: now, lease_until: null, attempts: 0, updated_at: now })
      .where('message_id', 'in', messageIds)
      .where('org_id', '=', orgId)
      .where('endpoint_id', '=', endpointId)
      .where(
        sql<boolean>`exists (select 1 from message_events e where e.id = webhook_deliveries.event_id and e.at >= ${range.since}
          and e.at < ${range.until})`,
      )
      .where(notInFlight(now));
    if (range.onlyFailed) reset = reset.where('state', '=', 'failed');
    const resetCount = Number((await reset.executeTakeFirst()).numUpdatedRows);
    if (range.onlyFailed) return resetCount;
    return (
      resetCount +
      (await fanOut(db, dialect, { kind: 'replay', orgId, endpointId, messageIds, since: range.since, until: range.until }, now))
    );
  };

  const withAttempts = async (rows: ReadonlyArray<Selectable<WebhookDeliveriesTable>>): Promise<WebhookDeliveryView[]> => {
    const ids = rows.map((r) => Number(r.id));
    const attempts =
      ids.length === 0
        ? []
        : await db
            .selectFrom('webhook_attempts')
            .selectAll()
            .where('delivery_id', 'in', ids)
            .orderBy('delivery_id')
            .orderBy('attempt')
            .execute();
    const byDelivery = new Map<number, WebhookAttemptView[]>();
    for (const a of attempts) {
      const list = byDelivery.get(Number(a.delivery_id)) ?? [];
      list.push({
        attempt: Number(a.attempt),
        at: Number(a.at),
        status: a.status === null ? null : Number(a.status),
        duration_ms: Number(a.duration_ms),
        response_body: a.response_body,
        error: a.error,
        request_headers: loggedHeaders(a.request_headers),
      });
      byDelivery.set(Number(a.delivery_id), list);
    }
    return rows.map((r) => {
      const id = Number(r.id);
      const log = byDelivery.get(id) ?? [];
      const state = stateOf(r.state);
      return {
        id: `whd_${id}`,
        endpoint_id: r.endpoint_id,
        event_type: r.event_type,
        message_id: r.message_id,
        webhook_id: webhookIdOf({
          id,
          message_id: r.message_id,
          sequence: r.sequence === null ? null : Number(r.sequence),
          event_id: r.event_id === null ? null : Number(r.event_id),
        }),
        state,
        attempts: log.length,
        next_attempt_at: state === 'pending' && r.next_attempt_at !== null ? Number(r.next_attempt_at) : null,
        last_status: r.last_status === null ? null : Number(r.last_status),
        last_error: r.last_error,
        created_at: Number(r.created_at),
        updated_at: Number(r.updated_at),
        request_body: r.payload,
        log,
      };
    });
  };

  return {
    /** The log of an organization, newest first, filtered; `limit` deliveries at most. */
    async list(orgId: string, filter: DeliveryFilter, limit: number): Promise<WebhookDeliveryView[]> {
      let q = db.selectFrom('webhook_deliveries').selectAll().where('org_id', '=', orgId);
      if (filter.endpointId !== undefined) q = q.where('endpoint_id', '=', filter.endpointId);
      if (filter.eventType !== undefined) q = q.where('event_type', '=', filter.eventType);
      if (filter.messageId !== undefined) q = q.where('message_id', '=', filter.messageId);
      if (filter.state !== undefined) q = q.where('state', '=', filter.state);
      if (filter.before !== undefined) {
        const before = parseDeliveryId(filter.before);
        if (before === undefined) return [];
        q = q.where('id', '<', before);
      }
      return withAttempts(await q.orderBy('id', 'desc').limit(limit).execute());
    },

    async get(orgId: string, deliveryId: string): Promise<WebhookDeliveryView | undefined> {
      const id = parseDeliveryId(deliveryId);
      if (id === undefined) return undefined;
      const row = await db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row === undefined ? undefined : (await withAttempts([row]))[0];
    },

    /**
     * Sends a delivery again: pending, due now, a new run of the retry schedule; its attempts
     * stay in the log and the body and `webhook-id` stay the same. One in flight is left to
     * finish (`in_flight`: nothing changed). `endpointId`, when given, must be the delivery's.
     * A delivery of a disabled endpoint is queued and waits until the endpoint is enabled again.
     */
    async replayOne(orgId: string, deliveryId: string, now: number, endpointId?: string): Promise<ReplayOneResult> {
      const id = parseDeliveryId(deliveryId);
      if (id === undefined) return { outcome: 'not_found' };
      const found = await db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_endpoints as w', (j) => j.onRef('w.org_id', '=', 'd.org_id').onRef('w.id', '=', 'd.endpoint_id'))
        .select(['d.endpoint_id', 'd.event_id', 'w.enabled'])
        .where('d.org_id', '=', orgId)
        .where('d.id', '=', id)
        .executeTakeFirst();
      if (found === undefined || (endpointId !== undefined && found.endpoint_id !== endpointId)) return { outcome: 'not_found' };
      if (found.event_id === null) return { outcome: 'test_event' };
      const moved = await db
        .updateTable('webhook_deliveries')
        .set({ state: 'pending', next_attempt_at: now, lease_until: null, attempts: 0, updated_at: now })
        .where('id', '=', id)
        .where(notInFlight(now))
        .executeTakeFirst();
      return {
        outcome: Number(moved.numUpdatedRows) === 0 ? 'in_flight' : 'queued',
        endpointId: found.endpoint_id,
        endpointEnabled: Number(found.enabled) === 1,
      };
    },

    /**
     * Every event of the organization in [since, until) (by when it happened) for this
     * endpoint: its deliveries go again (only the failed ones if asked), and, unless only the
     * failed ones are asked for, events the endpoint subscribes to but never got (written while
     * it was disabled or before it existed) get a delivery now, carrying the message's status
     * now (the status an old event left it in is not kept). Bounded: only events of messages
     * created at most 7 days before `since` (and before `until`), a range of at most 31 days
     * (longer: ReplayRangeTooLong), worked 500 messages at a time. Deliveries being sent are
     * left to finish. Returns how many were queued.
     */
    async replayRange(
      orgId: string,
      endpointId: string,
      range: { since: number; until: number; onlyFailed: boolean },
      now: number,
    ): Promise<number> {
      if (range.until - range.since > REPLAY_MAX_RANGE_MS) throw new ReplayRangeTooLong();
      if (range.until <= range.since) return 0;
      let queued = 0;
      let after: { created_at: number; id: string } | undefined;
      for (;;) {
        let q = db
          .selectFrom('messages')
          .select(['id', 'created_at'])
          .where('org_id', '=', orgId)
          .where('created_at', '>=', range.since - REPLAY_LOOKBACK_MS)
          .where('created_at', '<', range.until);
        if (after !== undefined) {
          const a = after;
          q = q.where((eb) =>
            eb.or([eb('created_at', '>', a.created_at), eb.and([eb('created_at', '=', a.created_at), eb('id', '>', a.id)])]),
          );
        }
        const slice = await q.orderBy('created_at').orderBy('id').limit(REPLAY_SLICE).execute();
        if (slice.length === 0) return queued;
        const messageIds = slice.map((m) => m.id);
        queued += await replaySlice(orgId, endpointId, messageIds, range, now);
        const last = slice[slice.length - 1];
        if (slice.length < REPLAY_SLICE || last === undefined) return queued;
        after = { created_at: Number(last.created_at), id: last.id };
      }
    },

    /**
     * A `webhook.test` delivery, held by the caller (`lease`) while it posts: it has no due
     * time, so no dispatcher claims it; the caller records its one attempt.
     */
    async insertTest(orgId: string, endpointId: string, now: number, lease: number): Promise<number> {
      const row = await db
        .insertInto('webhook_deliveries')
        .values({
          org_id: orgId,
          endpoint_id: endpointId,
          event_id: null,
          message_id: null,
          event_type: 'webhook.test',
          message_status: null,
          sequence: null,
          payload: null,
          state: 'pending',
          attempts: 0,
          next_attempt_at: null,
          lease_until: lease,
          last_status: null,
          last_error: null,
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(row.id);
    },
  };
}
