import { sql, type Kysely } from 'kysely';
import type { Dialect } from './dialect.js';
import { headersFromColumn } from '../webhooks/custom-headers.js';
import { signingSecrets } from '../webhooks/signing.js';
import type { AttemptRecord, ClaimedDelivery, EndpointStats, RecordedAttempt } from '../webhooks/ports.js';
import type { Database } from './schema.js';
import { alertsRepo } from './alerts.js';
import { deliveryLog } from './webhook-delivery-log.js';

export {
  parseDeliveryId,
  REPLAY_LOOKBACK_MS,
  REPLAY_MAX_RANGE_MS,
  ReplayRangeTooLong,
  type DeliveryFilter,
  type ReplayOneResult,
} from './webhook-delivery-log.js';

/**
 * The outbound webhooks' outbox, worked (issue 13). Rows are written by the event writers
 * (src/storage/webhook-outbox.ts); here they are claimed, recorded, read as the delivery log,
 * replayed and purged. The shapes are the webhooks' ports (src/webhooks/ports.ts).
 */

/** Who disabled an endpoint that failed too long, in words an operator acts on. */
function failingReason(since: number, now: number): string {
  return (
    `every delivery failed since ${new Date(since).toISOString()} ` +
    `(${Math.round((now - since) / 1000)} s, over MAILROOM_WEBHOOK_DISABLE_AFTER_SECONDS)`
  );
}

/**
 * A claim ranks at most this many due rows per slot it may fill: enough that endpoints sharing
 * a backlog each get their share, without sorting a backlog of 100,000 every 500 ms.
 */
const CANDIDATES_PER_SLOT = 4;

export function webhookDeliveriesRepo(db: Kysely<Database>, dialect: Dialect) {
  return {
    ...deliveryLog(db, dialect),

    /**
     * Claims due deliveries of enabled endpoints (call it in a transaction). Per endpoint, at
     * most `perEndpoint` in flight across every process: rows leased and not expired count
     * against it, so endpoints at their cap (and `skipEndpoints`, at their limit in this
     * process) are left out and a slow endpoint never fills a claim. A claim moves the row's due
     * time to its lease's end: a live lease is not due, an expired one is due again (a killed
     * worker's deliveries come back), and in-flight rows are the pending ones due within the
     * next `leaseMs`, one short range of the (state, next_attempt_at) index.
     *
     * Only the first `CANDIDATES_PER_SLOT × limit` due rows (by due time, on that index) are
     * ranked per endpoint, never the whole backlog. An endpoint with an older backlog fills the
     * candidates at most until it reaches its cap; then it is left out and the others come.
     * One UPDATE … RETURNING, like the message queue: PostgreSQL skips rows another worker
     * holds (FOR UPDATE SKIP LOCKED, which may not share a query level with the window
     * function, hence the nesting). Two PostgreSQL workers claiming at the same instant may
     * each see the other's rows as free of leases: the cap holds up to that race.
     */
    async claim(
      now: number,
      limit: number,
      leaseMs: number,
      skipEndpoints: ReadonlyArray<{ org_id: string; endpoint_id: string }>,
      perEndpoint = limit,
    ): Promise<ClaimedDelivery[]> {
      if (limit <= 0) return [];
      const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
      const skip =
        skipEndpoints.length === 0
          ? sql``
          : sql`and not (${sql.join(
              skipEndpoints.map((s) => sql`(c.org_id = ${s.org_id} and c.endpoint_id = ${s.endpoint_id})`),
              sql` or `,
            )})`;
      const lease = now + leaseMs;
      const rows = await sql<{ id: number; attempts: number }>`
        with busy as (
          select b.org_id, b.endpoint_id, count(*) as n from webhook_deliveries b
          where b.state = 'pending' and b.next_attempt_at > ${now} and b.next_attempt_at <= ${lease} and b.lease_until >= ${now}
          group by b.org_id, b.endpoint_id
        ),
        candidates as (
          select c.id, c.org_id, c.endpoint_id, c.next_attempt_at from webhook_deliveries c
          join webhook_endpoints w on w.org_id = c.org_id and w.id = c.endpoint_id and w.enabled = 1
          where c.state = 'pending' and c.next_attempt_at <= ${now} and (c.lease_until is null or c.lease_until < ${now})
            and c.event_id is not null ${skip}
            and not exists (select 1 from busy where busy.org_id = c.org_id and busy.endpoint_id = c.endpoint_id and busy.n >=
            ${perEndpoint})
          order by c.next_attempt_at
          limit ${limit * CANDIDATES_PER_SLOT}
        ),
        ranked as (
          select k.id, k.next_attempt_at,
            row_number() over (partition by k.org_id, k.endpoint_id order by k.next_attempt_at, k.id)
              + coalesce((select busy.n from busy where busy.org_id = k.org_id and busy.endpoint_id = k.endpoint_id), 0) as slot
          from candidates k
        )
        update webhook_deliveries set lease_until = ${lease}, next_attempt_at = ${lease}, updated_at = ${now}
        where id in (
          select d.id from webhook_deliveries d
          where d.id in (select ranked.id from ranked where ranked.slot <= ${perEndpoint} order by ranked.next_attempt_at limit
          ${limit})
          and d.state = 'pending' and (d.lease_until is null or d.lease_until < ${now})
          ${lock}
        )
        returning id, attempts`.execute(db);
      if (rows.rows.length === 0) return [];
      const details = await db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_endpoints as w', (j) => j.onRef('w.org_id', '=', 'd.org_id').onRef('w.id', '=', 'd.endpoint_id'))
        .leftJoin('message_events as e', 'e.id', 'd.event_id')
        .leftJoin('messages as m', 'm.id', 'd.message_id')
        .select([
          'd.id',
          'd.org_id',
          'd.endpoint_id',
          'd.event_id',
          'd.message_id',
          'd.event_type',
          'd.message_status',
          'd.sequence',
          'd.payload',
          'd.attempts',
          'w.url',
          'w.secret',
          'w.previous_secret',
          'w.previous_secret_expires_at',
          'w.headers',
          'e.type as e_type',
          'e.at as e_at',
          'e.detail as e_detail',
          'm.org_id as m_org',
          'm.template_id as m_template',
          'm.service_id as m_service',
          'm.mode as m_mode',
          'm.simulated as m_simulated',
        ])
        .where(
          'd.id',
          'in',
          rows.rows.map((r) => Number(r.id)),
        )
        .orderBy('d.next_attempt_at')
        .execute();
      return details.map((r) => ({
        id: Number(r.id),
        org_id: r.org_id,
        endpoint_id: r.endpoint_id,
        event_id: r.event_id === null ? null : Number(r.event_id),
        message_id: r.message_id,
        event_type: r.event_type,
        message_status: r.message_status,
        sequence: r.sequence === null ? null : Number(r.sequence),
        payload: r.payload,
        attempts: Number(r.attempts),
        lease_until: lease,
        url: r.url,
        secrets: signingSecrets(r, now),
        headers: headersFromColumn(r.headers),
        event: r.e_type === null || r.e_at === null ? null : { type: r.e_type, at: Number(r.e_at), detail: r.e_detail },
        message:
          r.m_org === null || r.m_template === null || r.m_service === null
            ? null
            : {
                org_id: r.m_org,
                template_id: r.m_template,
                service_id: r.m_service,
                mode: r.m_mode ?? 'live',
                simulated: Number(r.m_simulated) === 1,
              },
      }));
    },

    /**
     * Gives claimed deliveries back, due now (over a per-endpoint limit, or a stop), in one
     * statement per 200 (two parameters each); one whose lease moved on is not ours any more.
     */
    async release(items: ReadonlyArray<{ id: number; lease: number }>, now: number): Promise<void> {
      for (let i = 0; i < items.length; i += 200) {
        const slice = items.slice(i, i + 200);
        await db
          .updateTable('webhook_deliveries')
          .set({ lease_until: null, next_attempt_at: now })
          .where('state', '=', 'pending')
          .where((eb) => eb.or(slice.map((x) => eb.and([eb('id', '=', x.id), eb('lease_until', '=', x.lease)]))))
          .execute();
      }
    },

    /**
     * Records one attempt; call it in a transaction. Applies only while the claim's lease holds
     * (a delivery whose lease expired belongs to whoever claimed it next). The endpoint's
     * `failing_since` is cleared by a success and set by the first failure after one; 410 Gone,
     * or failing for `disableAfterMs`, disables it. Returns whether it applied and any reason
     * the endpoint was disabled for.
     */
    async recordAttempt(r: AttemptRecord): Promise<RecordedAttempt> {
      const moved = await db
        .updateTable('webhook_deliveries')
        .set({
          state: r.next.state,
          attempts: sql<number>`attempts + 1`,
          next_attempt_at: r.next.state === 'pending' ? r.next.nextAttemptAt : null,
          lease_until: null,
          last_status: r.status,
          last_error: r.error,
          payload: sql<string>`coalesce(payload, ${r.payload})`,
          updated_at: r.now,
        })
        .where('id', '=', r.id)
        .where('lease_until', '=', r.lease)
        .where('state', '=', 'pending')
        .returning(['org_id', 'endpoint_id'])
        .executeTakeFirst();
      if (moved === undefined) return { recorded: false, disabled: null };
      const last = await db
        .selectFrom('webhook_attempts')
        .select((eb) => eb.fn.max<number>('attempt').as('n'))
        .where('delivery_id', '=', r.id)
        .executeTakeFirst();
      await db
        .insertInto('webhook_attempts')
        .values({
          delivery_id: r.id,
          attempt: Number(last?.n ?? 0) + 1,
          at: r.at,
          status: r.status,
          duration_ms: Math.round(r.durationMs),
          response_body: r.body,
          error: r.error,
          request_headers: r.requestHeaders === null ? null : JSON.stringify(r.requestHeaders),
        })
        .execute();
      if (r.endpoint === undefined) return { recorded: true, disabled: null };
      const endpoint = db.updateTable('webhook_endpoints').where('org_id', '=', moved.org_id).where('id', '=', moved.endpoint_id);
      if (r.next.state === 'succeeded') {
        await endpoint.set({ failing_since: null }).where('failing_since', 'is not', null).execute();
        return { recorded: true, disabled: null };
      }
      const row = await endpoint
        .set({ failing_since: sql<number>`coalesce(failing_since, ${r.now})` })
        .returning(['failing_since', 'enabled'])
        .executeTakeFirst();
      if (row === undefined || Number(row.enabled) !== 1) return { recorded: true, disabled: null };
      const since = row.failing_since === null ? r.now : Number(row.failing_since);
      const reason = r.endpoint.gone
        ? `410 Gone from ${r.endpoint.url}`
        : r.now - since >= r.endpoint.disableAfterMs
          ? failingReason(since, r.now)
          : null;
      if (reason === null) return { recorded: true, disabled: null };
      const off = await endpoint
        .set({ enabled: 0, disabled_reason: reason, updated_at: r.now })
        .where('enabled', '=', 1)
        .executeTakeFirst();
      // The alert (issue 29) in the same transaction: only the attempt whose UPDATE disabled it fires.
      if (Number(off.numUpdatedRows) > 0) {
        const alerts = alertsRepo(db);
        if ((await alerts.settings(moved.org_id)).endpoint_disabled) {
          await alerts.fire(
            moved.org_id,
            'endpoint_disabled',
            moved.endpoint_id,
            { endpoint_id: moved.endpoint_id, reason },
            r.now,
          );
        }
      }
      return { recorded: true, disabled: reason };
    },

    /**
     * Pending deliveries per endpoint and the age of the oldest, for /metrics. `webhook.test`
     * rows are left out: one is sent at once, and one a crash left pending is never retried.
     */
    async stats(now: number): Promise<EndpointStats[]> {
      const rows = await db
        .selectFrom('webhook_deliveries')
        .select([
          'org_id',
          'endpoint_id',
          (eb) => eb.fn.countAll<number>().as('n'),
          (eb) => eb.fn.min<number>('created_at').as('oldest'),
        ])
        .where('state', '=', 'pending')
        .where('event_id', 'is not', null)
        .groupBy(['org_id', 'endpoint_id'])
        .execute();
      return rows.map((r) => ({
        org_id: r.org_id,
        endpoint_id: r.endpoint_id,
        backlog: Number(r.n),
        oldestPendingAgeMs: r.oldest === null ? 0 : Math.max(0, now - Number(r.oldest)),
      }));
    },

    /**
     * `webhook.test` and alert deliveries (no message to go with) past retention, `limit` at a time; their
     * attempts go by the foreign key's cascade. Message deliveries go with their message.
     */
    async purgeTestsBefore(before: number, limit: number): Promise<number> {
      const old = await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('message_id', 'is', null)
        .where('created_at', '<', before)
        .limit(limit)
        .execute();
      if (old.length === 0) return 0;
      await db
        .deleteFrom('webhook_deliveries')
        .where(
          'id',
          'in',
          old.map((o) => Number(o.id)),
        )
        .execute();
      return old.length;
    },
  };
}
