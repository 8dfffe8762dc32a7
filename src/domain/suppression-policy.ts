import { canonicalAddress } from './addresses.js';

/**
 * Automatic suppression: the one rule that the worker settling a message as a whole
 * (delivery/outcomes.ts), the worker settling its recipients apart (delivery/recipients.ts) and
 * events after hand-off (events/record.ts through events/apply.ts, and early.ts) all ask, as
 * credits/refund-policy.ts is for refunds. An address on the list is refused at send with 451
 * `recipient_suppressed` and dropped at delivery, so a wrong entry silently stops someone's mail:
 * the rule suppresses only on what says the mailbox is gone or its owner objected, and only
 * addresses the message had.
 */

/** Why an outcome puts an address on the list (an operator's entry is `manual`, never decided here). */
export type SuppressionReason = 'hard_bounce' | 'complaint';

/**
 * Every outcome that can be about a recipient, by when it is known. The unions spell out the
 * classifications of delivery/transport.ts (FailureKind, RefusalKind) and src/events/types.ts
 * (ProviderEvent's type and bounceType); domain/ imports neither, and their callers' types must
 * fit these (a new kind there is a compile error until this rule says what it does).
 */
export type ReportedOutcome =
  /** The relay's or provider's answer to our attempt, for the whole message or one recipient. */
  | { at: 'hand-off'; kind: 'temporary' | 'mailbox' | 'permanent' | 'service' }
  /** A report after hand-off: a provider's event, an RFC 3464 DSN, an RFC 5965 ARF report. */
  | {
      at: 'event';
      type: 'delivered' | 'bounced' | 'complained' | 'deferred' | 'failed';
      bounceType?: 'hard' | 'soft' | undefined;
    };

/**
 * What an outcome does to the address it is about:
 * - at hand-off, `mailbox` (5xx saying the mailbox does not exist, Postmark's inactive
 *   recipients): `hard_bounce`. `permanent` (any other 5xx: relaying denied, content refused),
 *   `temporary` (retried; when retries run out the recipient fails) and `service` (our
 *   credentials or settings are broken): nothing, none of them is about the address;
 * - after hand-off, `complained`: `complaint`; `bounced` hard: `hard_bounce`, and so is a bounce
 *   that does not say its kind (as precedence.ts moves its recipient to `bounced` and the
 *   counters count it hard); a soft bounce and `deferred`: nothing, the provider is still
 *   trying; `failed` (a provider's reject or drop: SES Reject, SendGrid dropped): nothing, it is
 *   often about the content; `delivered`: nothing.
 */
export function suppressionFor(outcome: ReportedOutcome): SuppressionReason | undefined {
  if (outcome.at === 'hand-off') return outcome.kind === 'mailbox' ? 'hard_bounce' : undefined;
  switch (outcome.type) {
    case 'complained':
      return 'complaint';
    case 'bounced':
      return outcome.bounceType === 'soft' ? undefined : 'hard_bounce';
    case 'delivered':
    case 'deferred':
    case 'failed':
      return undefined;
  }
}

/** Who a hand-off answer can be about: the attempt's own recipients (canonical, as allRecipients keys them). */
export interface Attempted {
  /** Every recipient the attempt went to. */
  owed: readonly string[];
  /** The message's To addresses. */
  to: ReadonlySet<string>;
}

/**
 * Whom a `mailbox` refusal of the whole message suppresses: the recipients the relay named, among
 * those the attempt went to (a name outside them, however a provider spelled it, suppresses
 * nobody); naming none (a 5xx after DATA that says "user unknown"), the To addresses the
 * attempt went to, not its Cc and Bcc, whom the message was not addressed to first.
 */
export function refusedMailboxes(named: readonly string[], attempted: Attempted): string[] {
  const owed = attempted.owed.map(canonicalAddress);
  if (named.length === 0) return owed.filter((address) => attempted.to.has(address));
  const wanted = new Set(named.map(canonicalAddress));
  return owed.filter((address) => wanted.has(address));
}

/**
 * Whether a refusal of one recipient may suppress it: it is `mailbox` and names a recipient the
 * attempt went to.
 */
export const refusalSuppresses = (
  refusal: { address: string; kind: 'temporary' | 'mailbox' | 'permanent' },
  attempted: Attempted,
): boolean =>
  suppressionFor({ at: 'hand-off', kind: refusal.kind }) !== undefined &&
  attempted.owed.map(canonicalAddress).includes(canonicalAddress(refusal.address));

/**
 * Whether a report after hand-off may suppress the recipient it was matched to, by that
 * recipient's state: not one dropped as `suppressed` before sending. It never got the message,
 * so no genuine report is about it, and an operator who removed it from the list since must not
 * see it come back from an old message.
 */
export const eventMaySuppress = (recipientState: string): boolean => recipientState !== 'suppressed';
