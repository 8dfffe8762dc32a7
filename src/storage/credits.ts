import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { CreditMode, OutOfCreditMode } from '../domain/types.js';
import { creditModeColumn, outOfCreditModeColumn } from './columns.js';
import { compiledOnce } from './compiled.js';
import type { Dialect } from './dialect.js';
import type { messagesRepo } from './messages.js';
import type { Database } from './schema.js';

/** Takes a credit when the balance, down to the floor given, allows; compiled once (a send runs it). */
const takeFrom = (floor: RawBuilder<number>) =>
  compiledOnce<{ id: string }>((db, p) =>
    db
      .updateTable('organizations')
      .set({ credits: sql<number>`credits - 1` })
      .where('id', '=', p('id'))
      .where(sql<boolean>`credits - 1 >= ${floor}`),
  );
const takeWithOverdraft = takeFrom(sql<number>`-overdraft`);
const takeFromBalance = takeFrom(sql<number>`0`);

/** What deciding between holding and refusing a send needs, read fresh inside the transaction. */
export interface CreditPosition {
  credits: number;
  credit_mode: CreditMode;
  when_out_of_credits: OutOfCreditMode;
  hold_queue_limit: number;
}

/**
 * The one place that moves an organization's balance (`credits ± n`): the domain (src/credits/)
 * decides when, storage writes. Setting a balance outright is `organizations.update`.
 * `stamp` is `updated_at` for an operator's action (top-up, release, cancel); balance moves
 * of the send path and the worker leave `updated_at` alone, as they did before this module.
 */
export function creditsRepo(db: Kysely<Database>, dialect: Dialect, messages: ReturnType<typeof messagesRepo>) {
  const takeOne = async (orgId: string, mayOverdraw: boolean): Promise<boolean> =>
    ((await (mayOverdraw ? takeWithOverdraft : takeFromBalance)(db, dialect, { id: orgId })).numAffectedRows ?? 0n) > 0n;

  return {
    /**
     * Takes one credit for a send, down to -overdraft when `mayOverdraw`, else down to 0. The
     * common case is one statement; the UPDATE locks the row (PostgreSQL), so parallel sends
     * never take more credits than there are. When it finds no credit on PostgreSQL, the row is
     * locked before answering, so the caller's count of held messages is seen in order by
     * parallel sends (SQLite has one writer anyway).
     */
    async takeForSend(orgId: string, mayOverdraw: boolean): Promise<boolean> {
      if (await takeOne(orgId, mayOverdraw)) return true;
      if (dialect !== 'postgres') return false;
      await db.selectFrom('organizations').select('id').where('id', '=', orgId).forUpdate().execute();
      // A top-up may have committed between the failed take and the lock (it released the holds
      // it could see, not this one): holding now would strand the message with credits left
      // until the next top-up. Seen in 1 of 10 rounds of 30 sends racing a top-up of 100.
      return takeOne(orgId, mayOverdraw);
    },

    /** The balance and out-of-credit settings as this transaction sees them. */
    async position(orgId: string): Promise<CreditPosition> {
      const row = await db
        .selectFrom('organizations')
        .select(['credits', 'credit_mode', 'when_out_of_credits', 'hold_queue_limit'])
        .where('id', '=', orgId)
        .executeTakeFirstOrThrow();
      return {
        credits: row.credits,
        credit_mode: creditModeColumn(row.credit_mode),
        when_out_of_credits: outOfCreditModeColumn(row.when_out_of_credits),
        hold_queue_limit: row.hold_queue_limit,
      };
    },

    /** Takes one credit from a positive balance (never the overdraft): releasing a held message. */
    async takeForRelease(orgId: string, stamp: number): Promise<boolean> {
      const r = await db
        .updateTable('organizations')
        .set({ credits: sql<number>`credits - 1`, updated_at: stamp })
        .where('id', '=', orgId)
        .where('credits', '>=', 1)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    /** Gives one credit back (whether a message earns it back is src/credits/refund-policy.ts). */
    async refund(orgId: string, stamp?: number): Promise<void> {
      await db
        .updateTable('organizations')
        .set(
          stamp === undefined ? { credits: sql<number>`credits + 1` } : { credits: sql<number>`credits + 1`, updated_at: stamp },
        )
        .where('id', '=', orgId)
        .execute();
    },

    /** Adds `amount` credits; the new balance, or undefined for an unknown organization. */
    async add(orgId: string, amount: number, stamp: number): Promise<number | undefined> {
      const row = await db
        .updateTable('organizations')
        .set({ credits: sql<number>`credits + ${amount}`, updated_at: stamp })
        .where('id', '=', orgId)
        .returning('credits')
        .executeTakeFirst();
      return row?.credits;
    },

    /**
     * Releases held messages oldest first, at most `budget`, one credit each, and takes those
     * credits in one statement. A message that moved meanwhile is skipped (compare-and-set).
     */
    async releaseHeld(orgId: string, budget: number, now: number): Promise<string[]> {
      const ids = await messages.oldestHeld(orgId, budget);
      const released: string[] = [];
      for (const id of ids) {
        if (await messages.transition(orgId, id, ['held'], 'queued', now, { credit_taken: true, next_attempt_at: now })) {
          await messages.appendEvent(id, 'released', now, now, { reason: 'credits_added' });
          released.push(id);
        }
      }
      if (released.length > 0) {
        await db
          .updateTable('organizations')
          .set({ credits: sql<number>`credits - ${released.length}` })
          .where('id', '=', orgId)
          .execute();
      }
      return released;
    },

    /**
     * Releases every held message of an organization whose credits were switched off (issue 29),
     * oldest first, without taking a credit: the message goes out uncharged, as its sends now do.
     */
    async releaseAllHeld(orgId: string, now: number): Promise<string[]> {
      const released: string[] = [];
      // Batches of 500: a hold queue is 1,000 by default; a message that moved meanwhile is skipped.
      for (;;) {
        const ids = await messages.oldestHeld(orgId, 500);
        let moved = 0;
        for (const id of ids) {
          if (await messages.transition(orgId, id, ['held'], 'queued', now, { credit_taken: false, next_attempt_at: now })) {
            await messages.appendEvent(id, 'released', now, now, { reason: 'credits_unlimited' });
            released.push(id);
            moved += 1;
          }
        }
        if (ids.length < 500 || moved === 0) return released;
      }
    },
  };
}

export type CreditsRepo = ReturnType<typeof creditsRepo>;
