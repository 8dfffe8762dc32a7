import type { Kysely } from 'kysely';
import { IS_QUEUED, IS_SENDING, type QueueEvent, type QueueEvents } from './queue-sql.js';
import type { BoundMessages, ReapResult } from './queue-types.js';
import type { Database } from './schema.js';

/** The statuses boundToService counts, in its order. */
const BOUND_STATUSES = ['queued', 'sending', 'held', 'held_service_error'] as const;
/**
 * What moveService moves with its status kept; `held_service_error` is queued again, and a
 * `sending` message is a worker's until its attempt ends.
 */
const KEEP_STATUS_ON_MOVE = ['queued', 'held'] as const;

/**
 * The queue's upkeep, beside a worker's own transitions of the messages it claimed (queue.ts):
 * the reaper taking back expired leases, a fixed service's held messages requeued, the depth
 * /metrics reports. Part of the same `store.queue` repository.
 */
export function queueUpkeep(db: Kysely<Database>, event: QueueEvent, events: QueueEvents) {
  return {
    /**
     * The reaper: leases that expired (a worker died mid-send) go back to the queue, unless
     * `giveUp` (the worker's retry policy) names a reason not to try the message again; then it
     * is `failed` with that reason.
     */
    async reapExpired(now: number, giveUp: (attempts: number, createdAt: number) => string | undefined): Promise<ReapResult> {
      const expired = await db
        .selectFrom('messages')
        .select(['id', 'service_id', 'attempts', 'created_at'])
        .where(IS_SENDING)
        .where('lease_until', '<', now)
        .limit(500)
        .execute();
      const result: ReapResult = { requeued: 0, failed: [] };
      for (const m of expired) {
        const reason = giveUp(Number(m.attempts), Number(m.created_at));
        // A message some recipients already got stays `sent` for them; the rest fail below.
        const partlySent =
          reason !== undefined &&
          (
            await db
              .selectFrom('message_recipients')
              .select('email')
              .where('message_id', '=', m.id)
              .where('state', '=', 'sent')
              .limit(1)
              .execute()
          ).length > 0;
        const moved = await db
          .updateTable('messages')
          .set(
            reason === undefined
              ? { status: 'queued', lease_until: null, next_attempt_at: now, updated_at: now }
              : {
                  status: partlySent ? 'sent' : 'failed',
                  lease_until: null,
                  next_attempt_at: null,
                  last_error: reason,
                  updated_at: now,
                },
          )
          .where('id', '=', m.id)
          .where('status', '=', 'sending')
          .where('lease_until', '<', now)
          .executeTakeFirst();
        if (moved.numUpdatedRows === 0n) continue;
        if (reason === undefined) {
          await event(m.id, 'queued', now, { reason: 'lease_expired' });
          result.requeued += 1;
        } else {
          // Recipients still owed the message (deferred earlier) fail with it, each named.
          const owed = await db
            .updateTable('message_recipients')
            .set({ state: 'failed', reason, updated_at: now })
            .where('message_id', '=', m.id)
            .where('state', '=', 'deferred')
            .returning('email')
            .execute();
          for (const o of owed) await event(m.id, 'failed', now, { recipient: o.email, reason });
          if (partlySent) continue;
          await event(m.id, 'failed', now, { reason });
          result.failed.push({ id: m.id, service_id: m.service_id });
        }
      }
      return result;
    },

    /** A fixed service takes its held messages back into the queue. */
    async requeueServiceErrors(orgId: string, serviceId: string, now: number): Promise<number> {
      const held = await db
        .selectFrom('messages')
        .select('id')
        .where('org_id', '=', orgId)
        .where('service_id', '=', serviceId)
        .where('status', '=', 'held_service_error')
        .execute();
      for (const { id } of held) {
        await db
          .updateTable('messages')
          .set({ status: 'queued', next_attempt_at: now, updated_at: now })
          .where('id', '=', id)
          .where('status', '=', 'held_service_error')
          .execute();
        await event(id, 'queued', now, { reason: 'service_updated' });
      }
      return held.length;
    },

    /**
     * Messages still bound to a service: queued (due or waiting for a retry), sending (a worker
     * holds them now), held (for credits or on the service's error). One count per status, each
     * from messages_org_status_time (org_id, status, …): the few rows of a status, not the
     * service's whole history (1,000,000 sent messages would be read through the service index).
     */
    async boundToService(orgId: string, serviceId: string): Promise<BoundMessages> {
      const counts = await Promise.all(
        BOUND_STATUSES.map(async (status) => {
          const row = await db
            .selectFrom('messages')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('org_id', '=', orgId)
            .where('status', '=', status)
            .where('service_id', '=', serviceId)
            .executeTakeFirstOrThrow();
          return Number(row.n);
        }),
      );
      const [queued = 0, sending = 0, held = 0, heldServiceError = 0] = counts;
      return { queued, sending, held: held + heldServiceError };
    },

    /**
     * Moves the queued and held messages of one service to another (the service is being
     * deleted or replaced): queued ones keep their due time, held-for-credits ones stay held,
     * and those held on the old service's error go back to the queue, due now, on the new one.
     * A message a worker holds (`sending`) is left to finish. Each moved message gets a `queued`
     * event naming both services (reason `service_moved`). Returns how many moved.
     */
    async moveService(orgId: string, from: string, to: string, now: number): Promise<number> {
      // Two bulk UPDATEs and one multi-row event insert, not two statements a message: a move
      // happens in an outage, with a large queue, and on SQLite holds the only writer meanwhile.
      const requeued = await db
        .updateTable('messages')
        .set({ service_id: to, status: 'queued', next_attempt_at: now, updated_at: now })
        .where('org_id', '=', orgId)
        .where('status', '=', 'held_service_error')
        .where('service_id', '=', from)
        .returning('id')
        .execute();
      const kept = await db
        .updateTable('messages')
        .set({ service_id: to, updated_at: now })
        .where('org_id', '=', orgId)
        .where('status', 'in', KEEP_STATUS_ON_MOVE)
        .where('service_id', '=', from)
        .returning('id')
        .execute();
      const moved = [...requeued, ...kept];
      // `queued`, as a fixed service's requeue writes: no new event type for webhooks to learn.
      const detail = JSON.stringify({ reason: 'service_moved', from, to });
      await events(
        moved.map((m) => ({ message_id: m.id, type: 'queued', at: now, detail })),
        now,
      );
      return moved.length;
    },

    /** Queue depth and the age of the oldest due message, for /metrics. */
    async depth(now: number): Promise<{ queued: number; due: number; oldestDueAgeMs: number }> {
      const row = await db
        .selectFrom('messages')
        .select((eb) => [
          eb.fn.countAll<number>().as('queued'),
          eb.fn.sum<number>(eb.case().when('next_attempt_at', '<=', now).then(1).else(0).end()).as('due'),
          eb.fn.min<number>(eb.case().when('next_attempt_at', '<=', now).then(eb.ref('next_attempt_at')).end()).as('oldest'),
        ])
        .where(IS_QUEUED)
        .executeTakeFirstOrThrow();
      const oldest = row.oldest === null ? null : Number(row.oldest);
      return {
        queued: Number(row.queued),
        due: Number(row.due ?? 0),
        oldestDueAgeMs: oldest === null ? 0 : Math.max(0, now - oldest),
      };
    },
  };
}
