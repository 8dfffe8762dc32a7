import { ApiError } from '../errors/api-error.js';
import type { MessageStatus } from '../domain/types.js';
import type { Store } from '../storage/store.js';
import { refundsCredit } from './refund-policy.js';

/** Statuses a message reaches only after it has left through the service. */
const ALREADY_SENT: readonly MessageStatus[] = ['sent', 'delivered', 'bounced', 'complained'];

/**
 * An operator releases one held message now. It takes a credit like any release; with no
 * credit left the answer is 402, as for a send in reject mode. Releasing a message that was
 * already sent is 409 `conflict` (spec, States and transitions). With credits `unlimited`
 * (issue 29) it goes uncharged, as the organization's sends do.
 */
export async function releaseMessage(store: Store, orgId: string, messageId: string): Promise<MessageStatus> {
  const now = store.clock.now();
  return store.transaction(async (tx): Promise<MessageStatus> => {
    const message = await tx.messages.get(orgId, messageId);
    if (message === undefined) throw new ApiError('message_not_found');
    if (message.status !== 'held') {
      const why = ALREADY_SENT.includes(message.status) ? 'was already sent' : `is ${message.status}, not held`;
      throw new ApiError('conflict', { message: `Message ${messageId} ${why}.`, details: { status: message.status } });
    }
    const unlimited = (await tx.credits.position(orgId)).credit_mode === 'unlimited';
    if (!unlimited && !(await tx.credits.takeForRelease(orgId, now)))
      throw new ApiError('insufficient_credits', { message: 'Add credits before releasing held messages.' });
    const extra = { credit_taken: !unlimited, next_attempt_at: now };
    if (!(await tx.messages.transition(orgId, messageId, ['held'], 'queued', now, extra))) {
      throw new ApiError('conflict', { message: `Message ${messageId} changed concurrently.` });
    }
    await tx.messages.appendEvent(messageId, 'released', now, now, { reason: 'operator' });
    return 'queued' as const;
  });
}

/**
 * An operator cancels a message that has not left yet (queued, held or held on a service
 * error): it becomes `discarded` and, having never been sent, gives its credit back.
 */
export async function cancelMessage(store: Store, orgId: string, messageId: string): Promise<MessageStatus> {
  const now = store.clock.now();
  const cancellable: MessageStatus[] = ['queued', 'held', 'held_service_error'];
  return store.transaction(async (tx): Promise<MessageStatus> => {
    const message = await tx.messages.get(orgId, messageId);
    if (message === undefined) throw new ApiError('message_not_found');
    if (
      !cancellable.includes(message.status) ||
      !(await tx.messages.transition(orgId, messageId, cancellable, 'discarded', now, { credit_taken: false }))
    ) {
      throw new ApiError('conflict', {
        message: `Message ${messageId} is ${message.status} and can no longer be cancelled.`,
        details: { status: message.status },
      });
    }
    if (refundsCredit('discarded', message.credit_taken)) await tx.credits.refund(orgId, now);
    await tx.messages.appendEvent(messageId, 'discarded', now, now, { reason: 'cancelled' });
    return 'discarded' as const;
  });
}
