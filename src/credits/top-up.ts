import { ApiError } from '../errors/api-error.js';
import type { Store } from '../storage/store.js';

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
  if (!Number.isInteger(amount) || amount <= 0)
    throw new ApiError('invalid_body', {
      message: 'amount must be a whole number above 0.',
      details: { fields: [{ field: 'amount', message: 'must be a whole number above 0' }] },
    });
  const now = store.clock.now();
  return store.transaction(async (tx) => {
    const credits = await tx.credits.add(orgId, amount, now);
    if (credits === undefined) throw new ApiError('not_found', { message: `Organization "${orgId}" does not exist.` });
    const released = await tx.credits.releaseHeld(orgId, Math.max(0, credits), now);
    return { credits: credits - released.length, released };
  });
}
