import { ApiError } from '../errors/api-error.js';
import type { OutOfCreditMode } from '../domain/types.js';
import type { Store } from '../storage/store.js';

/** An organization's credit position, as `mailroom credits show` and the admin API report it. */
export interface CreditStatus {
  org_id: string;
  /** Credits left; below zero when sends used the overdraft. Kept, unused, while credits are unlimited. */
  credits: number;
  /** Credits switched off (issue 29): sends take none and are never held or refused for them. */
  unlimited: boolean;
  /** How far below zero private-key sends may take the balance. */
  overdraft: number;
  /** Whether public-key sends may use the overdraft too. */
  public_overdraft: boolean;
  when_out_of_credits: OutOfCreditMode;
  /** Most messages held at once in `hold` mode. */
  hold_queue_limit: number;
  /** Messages held for lack of credits now; a top-up releases them oldest first. */
  held: number;
}

/** Read fresh (never from the catalog cache): the balance changes with every send. */
export async function creditStatus(store: Store, orgId: string): Promise<CreditStatus> {
  const org = await store.organizations.get(orgId);
  if (org === undefined) throw new ApiError('not_found', { message: `Organization "${orgId}" does not exist.` });
  return {
    org_id: org.id,
    credits: org.credits,
    unlimited: org.credit_mode === 'unlimited',
    overdraft: org.overdraft,
    public_overdraft: org.security.public_overdraft,
    when_out_of_credits: org.when_out_of_credits,
    hold_queue_limit: org.hold_queue_limit,
    held: await store.messages.countHeld(org.id),
  };
}
