import { sql, type Kysely, type Selectable } from 'kysely';
import { webhookIdOf } from '../webhooks/payload.js';
import type { WebhookAttemptView, WebhookDeliveryState, WebhookDeliveryView } from '../webhooks/types.js';
import type { Database, WebhookDeliveriesTable } from './schema.js';

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

function stateOf(s: string): WebhookDeliveryState {
  return s === 'succeeded' || s === 'failed' ? s : 'pending';
}

/** Deliveries not in flight now: a replay must not let a second send start beside the one under way. */
const notInFlight = (now: number) => sql<boolean>`not (state = 'pending' and lease_until is not null and lease_until >= ${now})`;

export function deliveryLog(db: Kysely<Database>) {
  const withAttempts = async (rows: ReadonlyArray<Selectable<WebhookDeliveriesTable>>): Promise<WebhookDeliveryView[]> => {
    const ids = rows.map((r) => Number(r.id));
    const attempts = ids.length === 0 ? [] : await db.selectFrom('webhook_attempts').selectAll()
      .where('delivery_id', 'in', ids).orderBy('delivery_id').orderBy('attempt').execute();
    const byDelivery = new Map<number, WebhookAttemptView[]>();
    for (const a of attempts) {
      const list = byDelivery.get(Number(a.delivery_id)) ?? [];
      list.push({
        attempt: Number(a.attempt), at: Number(a.at), status: a.status === null ? null : Number(a.status),
        duration_ms: Number(a.duration_ms), response_body: a.response_body, error: a.error,
      });
      byDelivery.set(Number(a.delivery_id), list);
    }
    return rows.map((r) => {
      const id = Number(r.id);
      const log = byDelivery.get(id) ?? [];
      const state = stateOf(r.state);
      return {
        id: `whd_${id}`, endpoint_id: r.endpoint_id, event_type: r.event_type, message_id: r.message_id,
        webhook_id: webhookIdOf({ id, message_id: r.message_id, sequence: r.sequence === null ? null : Number(r.sequence) }),
        state, attempts: log.length, next_attempt_at: state === 'pending' && r.next_attempt_at !== null ? Number(r.next_attempt_at) : null,
        last_status: r.last_status === null ? null : Number(r.last_status), last_error: r.last_error,
        created_at: Number(r.created_at), updated_at: Number(r.updated_at), log,
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
      const row = await db.selectFrom('webhook_deliveries').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : (await withAttempts([row]))[0];
    },

    /**
     * Sends a delivery again: pending, due now, a new run of the retry schedule; its attempts
     * stay in the log and the body and `webhook-id` stay the same. One in flight is left to
     * finish. False when there is no such delivery.
     */
    async replayOne(orgId: string, deliveryId: string, now: number): Promise<boolean> {
      const id = parseDeliveryId(deliveryId);
      if (id === undefined) return false;
      const found = await db.selectFrom('webhook_deliveries').select('id').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      if (found === undefined) return false;
      await db.updateTable('webhook_deliveries')
        .set({ state: 'pending', next_attempt_at: now, lease_until: null, attempts: 0, updated_at: now })
        .where('id', '=', id).where(notInFlight(now)).execute();
      return true;
    },

    /**
     * Every event of the organization in [since, until) (by when it happened) for this
     * endpoint: its deliveries go again (only the failed ones if asked), and, unless only the
     * failed ones are asked for, events the endpoint subscribes to but never got (written while
     * it was disabled or before it existed) get a delivery now. Returns how many were queued.
     */
    async replayRange(orgId: string, endpointId: string, range: { since: number; until: number; onlyFailed: boolean }, now: number): Promise<number> {
      let reset = db.updateTable('webhook_deliveries')
        .set({ state: 'pending', next_attempt_at: now, lease_until: null, attempts: 0, updated_at: now })
        .where('org_id', '=', orgId).where('endpoint_id', '=', endpointId).where('event_id', 'is not', null)
        .where(sql<boolean>`exists (select 1 from message_events e where e.id = webhook_deliveries.event_id and e.at >= ${range.since} and e.at < ${range.until})`)
        .where(notInFlight(now));
      if (range.onlyFailed) reset = reset.where('state', '=', 'failed');
      const resetCount = Number((await reset.executeTakeFirst()).numUpdatedRows);
      if (range.onlyFailed) return resetCount;
      // The status is the message's now: what it was when an old event was written is not kept.
      const created = await sql<{ id: number }>`
        insert into webhook_deliveries
          (org_id, endpoint_id, event_id, message_id, event_type, message_status, sequence, state, attempts, next_attempt_at, created_at, updated_at)
        select w.org_id, w.id, e.id, e.message_id, 'message.' || e.type, m.status,
          (select count(*) from message_events x where x.message_id = e.message_id and x.id <= e.id),
          'pending', 0, ${now}, ${now}, ${now}
        from webhook_endpoints w
        join messages m on m.org_id = w.org_id
        join message_events e on e.message_id = m.id
        where w.org_id = ${orgId} and w.id = ${endpointId} and e.at >= ${range.since} and e.at < ${range.until}
          and (w.events = '*' or w.events like '%,message.' || e.type || ',%')
        on conflict (org_id, endpoint_id, event_id) do nothing
        returning id`.execute(db);
      return resetCount + created.rows.length;
    },

    /**
     * A `webhook.test` delivery, held by the caller (`lease`) while it posts: it has no due
     * time, so no dispatcher claims it; the caller records its one attempt.
     */
    async insertTest(orgId: string, endpointId: string, now: number, lease: number): Promise<number> {
      const row = await db.insertInto('webhook_deliveries').values({
        org_id: orgId, endpoint_id: endpointId, event_id: null, message_id: null, event_type: 'webhook.test', message_status: null,
        sequence: null, payload: null, state: 'pending', attempts: 0, next_attempt_at: null, lease_until: lease, last_status: null,
        last_error: null, created_at: now, updated_at: now,
      }).returning('id').executeTakeFirstOrThrow();
      return Number(row.id);
    },
  };
}
