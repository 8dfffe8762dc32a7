import { sql, type Kysely } from 'kysely';
import { keyModeColumn } from './columns.js';
import type { Dialect } from './dialect.js';
import { settledStateColumn } from './recipient-states.js';
import type { Database } from './schema.js';
import { claimPostgres, markSentPostgres } from './queue-postgres.js';
import { queueEventWriter } from './queue-sql.js';
import type { ClaimedMessage, RecipientOutcome, SettledState } from './queue-types.js';
import { queueUpkeep } from './queue-upkeep.js';
import { insertEvents } from './webhook-outbox.js';

/** States a later write may still change; the others are settled for good. */
const OPEN_STATES = ['pending', 'deferred'] as const;

/** `(id, lease)` rows for a VALUES list, typed so both dialects compare them to the columns. */
function leasePairs(items: ReadonlyArray<{ id: string; lease: number }>) {
  return sql.join(items.map((i) => sql`(cast(${i.id} as text), cast(${i.lease} as bigint))`));
}

/**
 * The message table is the queue. Claiming is one UPDATE … RETURNING over the due rows:
 * PostgreSQL skips rows another worker has locked (FOR UPDATE SKIP LOCKED), so no message is
 * claimed twice (claimPostgres below); SQLite has a single writer, so the statement is atomic as it is.
 * Messages of suspended organizations are not claimed: they wait, still queued. The order is
 * the due time alone, which messages_due (migration 0012) yields as it is: adding `id` as
 * a tie-break made SQLite sort every message due at the same millisecond on each claim
 * (~2 ms per claim with 4,000 queued, the worker's largest cost).
 */
export function queueRepo(db: Kysely<Database>, dialect: Dialect) {
  const event = queueEventWriter(db, dialect);

  /** Recipients' own states; one already settled (not pending or deferred) is never changed. */
  const setRecipientStates = async (id: string, recipients: RecipientOutcome['recipients'], now: number): Promise<void> => {
    for (const rcpt of recipients) {
      await db
        .updateTable('message_recipients')
        .set({ state: rcpt.state, reason: rcpt.reason, updated_at: now })
        .where('message_id', '=', id)
        .where('email', '=', rcpt.address)
        .where('state', 'in', OPEN_STATES)
        .execute();
    }
  };

  return {
    async claim(now: number, limit: number, leaseMs: number): Promise<ClaimedMessage[]> {
      if (dialect === 'postgres') return claimPostgres(db, now, limit, leaseMs);
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
      }>`
        update messages set status = 'sending', lease_until = ${now + leaseMs}, attempts = attempts + 1, updated_at = ${now}
        where id in (
          select id from messages
          where status = 'queued' and next_attempt_at <= ${now}
            and org_id not in (select id from organizations where suspended = 1)
          order by next_attempt_at
          limit ${limit}
        )
        returning id, org_id, service_id, header_message_id, attempts, credit_taken, created_at, mode, simulated`.execute(db);
      if (rows.rows.length === 0) return [];
      const contents = new Map(
        (
          await db
            .selectFrom('message_contents')
            .select(['message_id', 'content', 'attachments'])
            .where(
              'message_id',
              'in',
              rows.rows.map((r) => r.id),
            )
            .execute()
        ).map((c) => [c.message_id, c]),
      );
      const claimed = rows.rows.map((r) => ({
        ...r,
        content: contents.get(r.id)?.content ?? '{}',
        attachments: contents.get(r.id)?.attachments ?? null,
        attempts: Number(r.attempts),
        created_at: Number(r.created_at),
        credit_taken: Number(r.credit_taken) === 1,
        mode: keyModeColumn(r.mode),
        simulated: Number(r.simulated) === 1,
        lease_until: now + leaseMs,
      }));
      await insertEvents(
        db,
        dialect,
        claimed.map((m) => ({ message_id: m.id, type: 'sending', at: now, detail: JSON.stringify({ attempt: m.attempts }) })),
        now,
      );
      return claimed;
    },

    /**
     * Many `sent` outcomes in two statements: one UPDATE over the (id, lease) pairs still held,
     * one multi-row event insert. Recording a send alone took two statements of ~40 µs each
     * through the query builder; in bulk it is a few µs a message. Returns the ids that moved.
     */
    async markSentMany(
      items: ReadonlyArray<{ id: string; lease: number; detail: Record<string, unknown>; providerMessageId?: string }>,
      now: number,
    ): Promise<string[]> {
      if (items.length === 0) return [];
      if (dialect === 'postgres') return markSentPostgres(db, items, now);
      const moved = await sql<{ id: string }>`
        update messages set status = 'sent', sent_at = ${now}, lease_until = null, last_error = null, updated_at = ${now}
        where status = 'sending' and (id, lease_until) in (values ${leasePairs(items)})
        returning id`.execute(db);
      const ids = new Set(moved.rows.map((r) => r.id));
      const events = items
        .filter((i) => ids.has(i.id))
        .map((i) => ({ message_id: i.id, type: 'sent', at: now, detail: JSON.stringify(i.detail) }));
      await insertEvents(db, dialect, events, now);
      // The provider's id, where the transport reported one: events after hand-off name it.
      for (const i of items) {
        if (i.providerMessageId !== undefined && ids.has(i.id)) {
          await db.updateTable('messages').set({ provider_message_id: i.providerMessageId }).where('id', '=', i.id).execute();
        }
      }
      return [...ids];
    },

    /**
     * The recipients of these messages that have a state of their own (not `pending`), by
     * message and address: what a new attempt must leave out or finish. One query per batch.
     */
    async recipientStates(messageIds: readonly string[]): Promise<Map<string, Map<string, SettledState>>> {
      const out = new Map<string, Map<string, SettledState>>();
      // In slices: a batch may be configured larger than the databases' parameter limits allow.
      const rows = [];
      for (let i = 0; i < messageIds.length; i += 500) {
        rows.push(
          ...(await db
            .selectFrom('message_recipients')
            .select(['message_id', 'email', 'state'])
            .where('message_id', 'in', messageIds.slice(i, i + 500))
            .where('state', '!=', 'pending')
            .execute()),
        );
      }
      for (const r of rows) {
        const states = out.get(r.message_id) ?? new Map<string, SettledState>();
        states.set(r.email, settledStateColumn(r.state));
        out.set(r.message_id, states);
      }
      return out;
    },

    /**
     * Records an attempt whose recipients parted ways (see RecipientOutcome), in the caller's
     * transaction, so the recipients' states and the message's next step commit together: a
     * worker killed after this commit leaves a message whose next attempt goes to the recipients
     * still owed it and to no one else. Applies only while this claim holds the message; should
     * it have lost it, the recipients the relay accepted are still recorded as `sent` (they were),
     * so whichever attempt comes next leaves them out. Returns whether the message moved.
     */
    async settleRecipients(id: string, lease: number, now: number, outcome: RecipientOutcome): Promise<boolean> {
      const next = outcome.next;
      const r = await db
        .updateTable('messages')
        .set({
          status: next.status,
          lease_until: null,
          last_error: next.lastError,
          updated_at: now,
          next_attempt_at: next.status === 'queued' ? next.nextAttemptAt : null,
          ...(outcome.accepted ? { sent_at: sql<number>`coalesce(sent_at, ${now})` } : {}),
          ...(outcome.providerMessageId !== undefined ? { provider_message_id: outcome.providerMessageId } : {}),
          ...(next.status === 'discarded' ? { credit_taken: 0 } : {}),
        })
        .where('id', '=', id)
        .where('status', '=', 'sending')
        .where('lease_until', '=', lease)
        .executeTakeFirst();
      const moved = r.numUpdatedRows > 0n;
      await setRecipientStates(id, moved ? outcome.recipients : outcome.recipients.filter((x) => x.state === 'sent'), now);
      if (moved && outcome.events.length > 0) {
        await insertEvents(
          db,
          dialect,
          outcome.events.map((e) => ({ message_id: id, type: e.type, at: now, detail: JSON.stringify(e.detail) })),
          now,
        );
      }
      return moved;
    },

    setRecipientStates,

    /**
     * Moves many leases on at once (the worker's heartbeat for messages still waiting in a
     * transport's queue); returns the ids whose lease this worker still held.
     */
    async renewLeases(items: ReadonlyArray<{ id: string; lease: number }>, until: number): Promise<string[]> {
      if (items.length === 0) return [];
      const renewed = await sql<{ id: string }>`
        update messages set lease_until = ${until}
        where status = 'sending' and (id, lease_until) in (values ${leasePairs(items)})
        returning id`.execute(db);
      return renewed.rows.map((r) => r.id);
    },

    /** Outcomes of one attempt apply only while this claim still holds the message (id, lease). */
    async markRetry(id: string, lease: number, now: number, nextAttemptAt: number, reason: string): Promise<boolean> {
      const r = await db
        .updateTable('messages')
        .set({ status: 'queued', next_attempt_at: nextAttemptAt, lease_until: null, last_error: reason, updated_at: now })
        .where('id', '=', id)
        .where('status', '=', 'sending')
        .where('lease_until', '=', lease)
        .executeTakeFirst();
      if (r.numUpdatedRows === 0n) return false;
      await event(id, 'deferred', now, { reason, retry_at: new Date(nextAttemptAt).toISOString() });
      return true;
    },

    /** Not sent, no service could take it (breakers open): queued again, the attempt not counted (never failed by a breaker). */
    async markWaiting(id: string, lease: number, now: number, nextAttemptAt: number, reason: string): Promise<boolean> {
      const r = await db
        .updateTable('messages')
        .set({
          status: 'queued',
          next_attempt_at: nextAttemptAt,
          lease_until: null,
          last_error: reason,
          updated_at: now,
          attempts: sql<number>`attempts - 1`,
        })
        .where('id', '=', id)
        .where('status', '=', 'sending')
        .where('lease_until', '=', lease)
        .executeTakeFirst();
      if (r.numUpdatedRows === 0n) return false;
      await event(id, 'deferred', now, { reason, retry_at: new Date(nextAttemptAt).toISOString() });
      return true;
    },

    async markFinal(
      id: string,
      lease: number,
      status: 'failed' | 'bounced' | 'held_service_error' | 'discarded',
      now: number,
      reason: string,
    ): Promise<boolean> {
      const r = await db
        .updateTable('messages')
        .set({
          status,
          lease_until: null,
          last_error: reason,
          updated_at: now,
          next_attempt_at: null,
          ...(status === 'discarded' ? { credit_taken: 0 } : {}),
        })
        .where('id', '=', id)
        .where('status', '=', 'sending')
        .where('lease_until', '=', lease)
        .executeTakeFirst();
      if (r.numUpdatedRows === 0n) return false;
      await event(id, status, now, { reason });
      return true;
    },

    /**
     * Gives a claimed message back untouched (it did not leave: the attempt is not counted); `reason`
     * in the `queued` event: worker_stopped (a graceful stop), context_unavailable (the batch's reads failed).
     */
    async release(id: string, lease: number, now: number, reason: string): Promise<void> {
      const r = await db
        .updateTable('messages')
        .set({ status: 'queued', lease_until: null, updated_at: now, next_attempt_at: now, attempts: sql<number>`attempts - 1` })
        .where('id', '=', id)
        .where('status', '=', 'sending')
        .where('lease_until', '=', lease)
        .executeTakeFirst();
      if (r.numUpdatedRows > 0n) await event(id, 'queued', now, { reason });
    },
    ...queueUpkeep(db, event, (events, now) => insertEvents(db, dialect, events, now)),
  };
}
