import type { KeyType, Organization } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import type { Repos } from '../storage/store.js';

/** How a send was let in: `queued` with a credit taken, `queued` uncharged (credits unlimited), or `held`. */
export interface CreditOutcome {
  status: 'queued' | 'held';
  creditTaken: boolean;
}

/**
 * Inside the acceptance transaction: takes one credit (→ `queued`), or holds the message
 * (→ `held`), or refuses with 402. Storage takes the credit and, finding none, locks the row
 * (PostgreSQL) before the held count is read, so parallel sends see each other's holds.
 * Private-key sends may go down to -overdraft; public-key sends only when public_overdraft
 * is on (spec, Versioning: off by default).
 *
 * An organization with credits `unlimited` (issue 29) is neither charged nor held nor refused.
 * Its mode is read again inside the transaction before deciding: the catalog copy the caller holds
 * may predate a switch, and a send held just after the switch released the holds would be
 * stranded (the switch and this read take the same row: PostgreSQL orders them, SQLite has one writer).
 */
export async function takeCredit(tx: Repos, org: Organization, keyType: KeyType): Promise<CreditOutcome> {
  if (org.credit_mode === 'unlimited' && (await tx.credits.position(org.id)).credit_mode === 'unlimited')
    return { status: 'queued', creditTaken: false };
  const mayOverdraw = keyType === 'private' || org.security.public_overdraft;
  if (await tx.credits.takeForSend(org.id, mayOverdraw)) return { status: 'queued', creditTaken: true };
  const current = await tx.credits.position(org.id);
  if (current.credit_mode === 'unlimited') return { status: 'queued', creditTaken: false };
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
  return { status: 'held', creditTaken: false };
}
