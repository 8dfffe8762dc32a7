import type { MessageStatus } from '../domain/types.js';
import type { RecipientState } from '../storage/recipient-states.js';
import type { ProviderEvent } from './types.js';

/**
 * The rules by which events after hand-off move a recipient's state and a message's status.
 * Both move forward only, so events that arrive late or out of order (a complaint before its
 * delivery) are recorded on the timeline but never undo a later outcome.
 */

/** Statuses a message has once it left us: only these are moved by provider events. */
export const AFTER_HAND_OFF: readonly MessageStatus[] = ['sent', 'delivered', 'bounced', 'complained', 'failed'];

/**
 * complained > bounced > delivered > sent (the precedence). `failed` (every recipient
 * rejected by the provider after it took the call, or a failure at hand-off) ranks just above
 * `sent`: a delivery or bounce reported later still says more about what happened.
 */
const STATUS_RANK: Partial<Record<MessageStatus, number>> = { sent: 0, failed: 1, delivered: 2, bounced: 3, complained: 4 };

/** The same order for one recipient; `suppressed` (never sent to) is never changed by events. */
const RECIPIENT_RANK: Record<RecipientState, number> = {
  pending: 0,
  sent: 0,
  deferred: 0,
  failed: 1,
  delivered: 2,
  bounced: 3,
  complained: 4,
  suppressed: 99,
};

/**
 * What an event makes of its recipient: delivered, bounced (hard only), complained, or failed
 * (a provider's reject or drop). A soft bounce and a deferral are timeline entries only: the
 * provider is still trying, and `deferred` is the worker's "owed a retry" state.
 */
export function recipientStateFor(e: Pick<ProviderEvent, 'type' | 'bounceType'>): RecipientState | undefined {
  switch (e.type) {
    case 'delivered':
      return 'delivered';
    case 'complained':
      return 'complained';
    case 'failed':
      return 'failed';
    case 'bounced':
      return e.bounceType === 'soft' ? undefined : 'bounced';
    case 'deferred':
      return undefined;
  }
}

/** Whether `to` is a step forward from `from` for one recipient. */
export function recipientMovesTo(from: RecipientState, to: RecipientState): boolean {
  return RECIPIENT_RANK[to] > RECIPIENT_RANK[from];
}

/** A stored `pending` recipient shares its message's outcome (see recipient-states.ts). */
function effective(state: RecipientState, status: MessageStatus): RecipientState {
  if (state !== 'pending' && state !== 'deferred') return state;
  if (status === 'bounced') return 'bounced';
  if (status === 'failed') return 'failed';
  return 'sent';
}

/**
 * The status a message's recipients add up to: complained when any complained; bounced when
 * every recipient bounced or was rejected and at least one hard-bounced; delivered when at
 * least one was delivered and neither rule holds; failed when every one was rejected; else sent.
 * Recipients suppressed before sending were never sent to and do not count.
 */
export function statusOfRecipients(states: readonly RecipientState[], current: MessageStatus): MessageStatus {
  const all = states.filter((s) => s !== 'suppressed').map((s) => effective(s, current));
  if (all.length === 0) return current;
  if (all.includes('complained')) return 'complained';
  if (all.every((s) => s === 'bounced' || s === 'failed') && all.includes('bounced')) return 'bounced';
  if (all.includes('delivered')) return 'delivered';
  if (all.every((s) => s === 'failed')) return 'failed';
  return 'sent';
}

/** Whether a message may move from `from` to `to`: forward only, and only once it left us. */
export function statusMovesTo(from: MessageStatus, to: MessageStatus): boolean {
  const a = STATUS_RANK[from];
  const b = STATUS_RANK[to];
  return a !== undefined && b !== undefined && b > a;
}
