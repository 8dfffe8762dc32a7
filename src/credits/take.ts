import type { KeyType, Organization } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import type { Repos } from '../storage/store.js';

/**
 * Inside the acceptance transaction: takes one credit (→ `queued`), or holds the message
 * (→ `held`), or refuses with 402. Storage takes the credit and, finding none, locks the row
 * (PostgreSQL) before the held count is read, so parallel sends see each other's holds.
 * Private-key sends may go down to -overdraft; public-key sends only when public_overdraft
 * is on (spec, Versioning: off by default).
 */
export async function takeCredit(tx: Repos, org: Organization, keyType: KeyType): Promise<'queued' | 'held'> {
  const mayOverdraw = keyType === 'private' || org.security.public_overdraft;
  if (await tx.credits.takeForSend(org.id, mayOverdraw)) return 'queued';
  const current = await tx.credits.position(org.id);
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
