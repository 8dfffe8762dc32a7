import { sql, type RawBuilder } from 'kysely';
import type { KeyType, Organization } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import { compiledOnce } from '../storage/compiled.js';
import type { Repos } from '../storage/store.js';

/** Takes a credit when the balance, down to the floor given, allows; compiled once (a send runs it). */
const takeFrom = (floor: RawBuilder<number>) => compiledOnce<{ id: string }>((db, p) => db.updateTable('organizations')
  .set({ credits: sql<number>`credits - 1` })
  .where('id', '=', p('id'))
  .where(sql<boolean>`credits - 1 >= ${floor}`));
const takeWithOverdraft = takeFrom(sql<number>`-overdraft`);
const takeFromBalance = takeFrom(sql<number>`0`);

/**
 * Inside the acceptance transaction: takes one credit (→ `queued`), or holds the message
 * (→ `held`), or refuses with 402. On PostgreSQL the organization row is locked before the
 * held count is read, so parallel sends see each other's holds; SQLite has one writer anyway.
 * Private-key sends may go down to -overdraft; public-key sends only when public_overdraft
 * is on (spec, Versioning: off by default).
 */
export async function takeCredit(tx: Repos, org: Organization, keyType: KeyType): Promise<'queued' | 'held'> {
  const mayOverdraw = keyType === 'private' || org.security.public_overdraft;
  // The common case in one statement: take a credit if the balance allows. The UPDATE locks
  // the row (PostgreSQL), so parallel sends never take more credits than there are.
  const take = async () => ((await (mayOverdraw ? takeWithOverdraft : takeFromBalance)(tx.db, tx.dialect, { id: org.id })).numAffectedRows ?? 0n) > 0n;
  if (await take()) return 'queued';
  // Out of credits: lock the row so held counts of parallel sends are seen in order.
  if (tx.dialect === 'postgres') {
    await tx.db.selectFrom('organizations').select('id').where('id', '=', org.id).forUpdate().execute();
    // A top-up may have committed between the failed take and the lock (it released the holds
    // it could see, not this one): holding now would strand the message with credits left
    // until the next top-up. Seen in 1 of 10 rounds of 30 sends racing a top-up of 100.
    if (await take()) return 'queued';
  }
  const current = await tx.db.selectFrom('organizations')
    .select(['credits', 'when_out_of_credits', 'hold_queue_limit'])
    .where('id', '=', org.id).executeTakeFirstOrThrow();
  if (current.when_out_of_credits === 'reject') {
    throw new ApiError('insufficient_credits', { details: { credits: current.credits } });
  }
  const held = await tx.messages.countHeld(org.id);
  if (held >= current.hold_queue_limit) {
    throw new ApiError('insufficient_credits', {
      message: 'The organization has no credits and its hold queue is full.',
      details: { reason: 'hold_queue_full', held, limit: current.hold_queue_limit },
    });
  }
  return 'held';
}
