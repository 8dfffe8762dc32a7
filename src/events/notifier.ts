import type { EventNotifier } from './types.js';

/**
 * The process's notifier (buildServices): every recorded event after hand-off already has its
 * webhook deliveries in the outbox (written in the event's transaction,
 * src/storage/webhook-outbox.ts), so notifying only wakes this process's webhook dispatcher to
 * send them now instead of at its next poll; `also` (tests: a recording one) sees the event too.
 */
export function nudgingNotifier(nudge: () => void, also?: EventNotifier): EventNotifier {
  return {
    notify: (event) => {
      also?.notify(event);
      nudge();
    },
  };
}
