import type { SettlingMessage } from '../storage/provider-events.js';
import type { Repos } from '../storage/store.js';
import { applyOutcomeOnly, applyToMessage, storedEvent, type Recorded } from './apply.js';
import { AFTER_HAND_OFF } from './precedence.js';

/**
 * Events that arrived before the worker settled their message (issue 25, 8). A provider can
 * report a bounce within milliseconds of taking a message, before the worker has written
 * `sent` (an outside check saw a Postmark HardBounce recorded 11 ms before it). Such an event
 * is stored either way, and applied here, in the transaction that settles the attempt:
 * - matched by our id (metadata the provider echoes) while the message was queued or sending:
 *   its timeline entry, webhook deliveries and suppression were written when it arrived; its
 *   effect on states and status is applied now, forward only, so nothing counts twice;
 * - unmatched, because it names the provider's message id, which only the send's result
 *   carries and which the settle is writing now: it is given its message (claimEvent, so one
 *   settle takes it) and applied whole, timeline entry and webhooks included, once.
 * The settle locks the provider ids it records first (lockProviderIds), as the intake does for
 * the ids its events name, so on PostgreSQL an event committed at the same moment is seen by
 * one side or the other.
 */

/**
 * Applies the early events of messages this transaction settles. One query for the batch;
 * nothing more when no event came early, the usual case. A message settled back to the queue
 * (a retry owed to some recipients) takes its unmatched events now, as the intake would have
 * (timeline, suppression), and their effect on states waits for the settle that ends it.
 * Returns the events applied whole, for the caller's counters after the commit.
 */
export async function settleEarlyEvents(tx: Repos, messages: readonly SettlingMessage[], now: number): Promise<Recorded[]> {
  const rows = await tx.providerEvents.earlyEvents(messages);
  if (rows.length === 0) return [];
  const recorded: Recorded[] = [];
  for (const m of messages) {
    const mine = rows.filter(
      (r) => r.message_id === m.id || (r.message_id === null && r.provider_message_id === m.providerMessageId),
    );
    if (mine.length === 0) continue;
    const message = await tx.providerEvents.findMessage({ orgId: null, messageId: m.id });
    if (message === undefined) continue;
    const left = AFTER_HAND_OFF.includes(message.status);
    for (const row of mine) {
      const event = storedEvent(row.detail, now);
      if (event === undefined) continue;
      if (row.message_id === null) {
        if (!(await tx.providerEvents.claimEvent(row, m.id))) continue;
        recorded.push(await applyToMessage(tx, now, event, message));
      } else if (left) {
        // Read each time: the one before may have moved a recipient.
        await applyOutcomeOnly(tx, now, event, message, await tx.providerEvents.recipients(m.id));
      }
    }
  }
  return recorded;
}

/**
 * The same for one message settled apart (src/delivery/recipients.ts), whose provider id, if
 * the attempt reported one, is already on its row.
 */
export async function replayEarlyEvents(tx: Repos, messageId: string, now: number): Promise<Recorded[]> {
  const message = await tx.providerEvents.findMessage({ orgId: null, messageId });
  if (message === undefined) return [];
  const providerMessageId = message.provider_message_id ?? undefined;
  return settleEarlyEvents(
    tx,
    [{ id: message.id, orgId: message.org_id, ...(providerMessageId !== undefined ? { providerMessageId } : {}) }],
    now,
  );
}
