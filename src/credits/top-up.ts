import { sql } from 'kysely';
import { ApiError } from '../errors/api-error.js';
import type { Repos, Store } from '../storage/store.js';

export interface TopUpResult {
  credits: number;
  /** Held messages released by this top-up, oldest first. */
  released: string[];
}

/**
 * Adds credits and, in the same transaction, releases held messages oldest first, one credit
 * each, while the balance allows (spec, States and transitions: no client call needed). The
 * organization row is updated first, so concurrent top-ups and sends queue behind its lock
 * (PostgreSQL) or the single writer (SQLite) and never release a message twice.
 */
export async function addCredits(store: Store, orgId: string, amount: number): Promise<TopUpResult> {
  if (!Number.isInteger(amount) || amount <= 0) throw new ApiError('invalid_body', { message: 'amount must be a whole number above 0.', details: { fields: [{ field: 'amount', message: 'must be a whole number above 0' }] } });
  const now = store.clock.now();
  return store.transaction(async (tx) => {
    const row = await tx.db.updateTable('organizations')
      .set({ credits: sql<number>`credits + ${amount}`, updated_at: now })
      .where('id', '=', orgId)
      .returning('credits')
      .executeTakeFirst();
    if (row === undefined) throw new ApiError('not_found', { message: `Organization "${orgId}" does not exist.` });
    const released = await releaseHeld(tx, orgId, Math.max(0, row.credits), now);
    return { credits: row.credits - released.length, released };
  });
}

async function releaseHeld(tx: Repos, orgId: string, budget: number, now: number): Promise<string[]> {
  const ids = await tx.messages.oldestHeld(orgId, budget);
  const released: string[] = [];
  for (const id of ids) {
    if (await tx.messages.transition(orgId, id, ['held'], 'queued', now, { credit_taken: true, next_attempt_at: now })) {
      await tx.messages.appendEvent(id, 'released', now, { reason: 'credits_added' });
      released.push(id);
    }
  }
  if (released.length > 0) {
    await tx.db.updateTable('organizations').set({ credits: sql<number>`credits - ${released.length}` }).where('id', '=', orgId).execute();
  }
  return released;
}
