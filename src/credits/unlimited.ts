import type { CreditMode } from '../domain/types.js';
import type { Repos } from '../storage/store.js';

/**
 * After an organization's settings are written (admin API or config file), in the same
 * transaction: with credits `unlimited` (issue 29) nothing waits for credits, so the messages
 * held for them go to the queue now, uncharged, oldest first (timeline: `released`, reason
 * `credits_unlimited`). Asked on every write that leaves the mode unlimited, not only on the
 * switch, so a message held by a send that raced the switch is released by the next write.
 */
export async function releaseIfUnlimited(tx: Repos, orgId: string, mode: CreditMode, now: number): Promise<string[]> {
  return mode === 'unlimited' ? tx.credits.releaseAllHeld(orgId, now) : [];
}
