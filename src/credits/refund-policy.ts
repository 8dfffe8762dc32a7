import type { MessageStatus } from '../domain/types.js';

/**
 * Whether a message that reaches `status` gives its credit back: the one rule the worker, an
 * operator's cancel and events after hand-off (src/events/record.ts) all ask. Events move a
 * message only to delivered, bounced, complained or failed, none of which gives a credit back:
 * a bounce or a complaint comes after the message left through the service.
 * - `discarded`: it never left (cancelled, or every recipient suppressed), so the credit returns;
 * - `failed`: it was attempted and keeps the credit (the provider may have spent effort on it;
 *   an operator can top up);
 * - `sent`, `delivered`, `bounced`, `complained`: it left through the service, so it was used;
 * - the rest (`queued`, `held`, …) are not outcomes and change nothing.
 * A message whose credit was never taken (held, then discarded) has nothing to give back.
 */
export function refundsCredit(status: MessageStatus, creditTaken: boolean): boolean {
  return creditTaken && status === 'discarded';
}
