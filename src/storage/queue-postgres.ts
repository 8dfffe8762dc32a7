import { sql, type Kysely } from 'kysely';
import { keyModeColumn } from './columns.js';
import type { ClaimedMessage } from './queue-types.js';
import type { Database } from './schema.js';
import { fanOutEvents } from './webhook-outbox.js';

// The PostgreSQL side of the queue's two hot statements (queue.ts calls them on that dialect).

/**
 * PostgreSQL's claim in one statement: the UPDATE … RETURNING, the `sending` events (a CTE over
 * its rows) and the contents. Whether a webhook endpoint may want the events is read in the
 * same statement, so the fan-out (webhook-outbox.ts, a statement of its own because it counts
 * the events just inserted) runs only for organizations with an enabled endpoint. Through
 * separate statements a claim took 4 round trips inside its transaction; on a 2-core machine
 * under load each cost ~9 ms, round trips rather than rows were the claim's cost (bench/pg-queue.ts).
 * The events' detail is the text JSON.stringify writes, `{"attempt":N}`.
 */
export async function claimPostgres(
  db: Kysely<Database>,
  now: number,
  limit: number,
  leaseMs: number,
): Promise<ClaimedMessage[]> {
  const rows = await sql<{
    id: string;
    org_id: string;
    service_id: string;
    header_message_id: string;
    attempts: number;
    credit_taken: number;
    created_at: number;
    mode: string;
    simulated: number;
    content: string | null;
    attachments: string | null;
    event_id: number;
    hooked: boolean;
  }>`
    with claimed as (
      update messages set status = 'sending', lease_until = ${now + leaseMs}, attempts = attempts + 1, updated_at = ${now}
      where id in (
        select id from messages
        where status = 'queued' and next_attempt_at <= ${now}
          and org_id not in (select id from organizations where suspended = 1)
        order by next_attempt_at
        limit ${limit}
        for update skip locked
      )
      returning id, org_id, service_id, header_message_id, attempts, credit_taken, created_at, mode, simulated
    ), events as (
      insert into message_events (message_id, type, at, detail)
      select id, 'sending', ${now}, '{"attempt":' || attempts || '}' from claimed
      returning id, message_id
    )
    select c.id, c.org_id, c.service_id, c.header_message_id, c.attempts, c.credit_taken, c.created_at, c.mode, c.simulated,
      mc.content, mc.attachments, e.id as event_id,
      exists (select 1 from webhook_endpoints w where w.org_id = c.org_id and w.enabled = 1) as hooked
    from claimed c
    join events e on e.message_id = c.id
    left join message_contents mc on mc.message_id = c.id`.execute(db);
  if (rows.rows.some((r) => r.hooked))
    await fanOutEvents(
      db,
      'postgres',
      rows.rows.map((r) => Number(r.event_id)),
      now,
    );
  return rows.rows.map((r) => ({
    id: r.id,
    org_id: r.org_id,
    service_id: r.service_id,
    header_message_id: r.header_message_id,
    content: r.content ?? '{}',
    attachments: r.attachments,
    attempts: Number(r.attempts),
    created_at: Number(r.created_at),
    credit_taken: Number(r.credit_taken) === 1,
    mode: keyModeColumn(r.mode),
    simulated: Number(r.simulated) === 1,
    lease_until: now + leaseMs,
  }));
}

/**
 * PostgreSQL's markSentMany in one statement per 500 messages: the UPDATE over the (id, lease)
 * pairs still held, setting the provider's id where one was reported, and the `sent` events of
 * the rows it moved; the fan-out as in claimPostgres. Was 3 round trips and one more per
 * provider id.
 */
export async function markSentPostgres(
  db: Kysely<Database>,
  items: ReadonlyArray<{ id: string; lease: number; detail: Record<string, unknown>; providerMessageId?: string }>,
  now: number,
): Promise<string[]> {
  const moved: string[] = [];
  for (let i = 0; i < items.length; i += 500) {
    const values = sql.join(
      items.slice(i, i + 500).map(
        (x) =>
          sql`(cast(${x.id} as text), cast(${x.lease} as bigint), cast(${JSON.stringify(x.detail)} as text),
              cast(${x.providerMessageId ?? null} as text))`,
      ),
    );
    const rows = await sql<{ id: string; event_id: number; hooked: boolean }>`
      with items (id, lease, detail, provider_message_id) as (values ${values}),
      moved as (
        update messages m set status = 'sent', sent_at = ${now}, lease_until = null, last_error = null, updated_at = ${now},
          provider_message_id = coalesce(i.provider_message_id, m.provider_message_id)
        from items i
        where m.status = 'sending' and m.id = i.id and m.lease_until = i.lease
        returning m.id, m.org_id, i.detail
      ), events as (
        insert into message_events (message_id, type, at, detail)
        select id, 'sent', ${now}, detail from moved
        returning id, message_id
      )
      select mv.id, e.id as event_id,
        exists (select 1 from webhook_endpoints w where w.org_id = mv.org_id and w.enabled = 1) as hooked
      from moved mv join events e on e.message_id = mv.id`.execute(db);
    if (rows.rows.some((r) => r.hooked))
      await fanOutEvents(
        db,
        'postgres',
        rows.rows.map((r) => Number(r.event_id)),
        now,
      );
    for (const r of rows.rows) moved.push(r.id);
  }
  return moved;
}
