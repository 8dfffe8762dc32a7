import { sql } from 'kysely';
import type { KeyType, Organization } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import type { Repos } from '../storage/store.js';

/**
 * Inside the acceptance transaction: takes one credit (→ `queued`), or holds the message
 * (→ `held`), or refuses with 402. The organization row is locked first on PostgreSQL, so
 * parallel sends see each other's credits and held counts; SQLite has one writer anyway.
 * Private-key sends may go down to -overdraft; public-key sends only when public_overdraft
 * is on (spec, Versioning: off by default).
 */
export async function takeCredit(tx: Repos, org: Organization, keyType: KeyType): Promise<'queued' | 'held'> {
  if (tx.dialect === 'postgres') {
    await tx.db.selectFrom('organizations').select('id').where('id', '=', org.id).forUpdate().execute();
  }
  const current = await tx.db.selectFrom('organizations')
    .select(['credits', 'overdraft', 'when_out_of_credits', 'hold_queue_limit'])
    .where('id', '=', org.id).executeTakeFirstOrThrow();
  const mayOverdraw = keyType === 'private' || org.security.public_overdraft;
  const floor = mayOverdraw ? -current.overdraft : 0;
  if (current.credits - 1 >= floor) {
    await tx.db.updateTable('organizations').set({ credits: sql<number>`credits - 1` }).where('id', '=', org.id).execute();
    return 'queued';
  }
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
