import type { MessageStatus } from './types.js';

/**
 * Delivery, bounce and complaint rates (issue 29), from message counts by current status. Pure:
 * the overview (src/admin/overview.ts) and the alerts read the same arithmetic.
 *
 * A message's status is its outcome so far, and moves forward only (src/events/precedence.ts:
 * complained > bounced > delivered > sent), so each message counts once:
 * - sent: left this server and was taken by its service: `sent` (no outcome reported yet; an SMTP
 *   relay without delivery reports stays here), `delivered`, `bounced` or `complained`. The
 *   denominator of the delivery and bounce rates, as SES counts "sends" and Postmark "sent".
 *   `failed` is left out: its retries ran out or every recipient was refused before any mailbox
 *   provider judged it (an outage or a bad address list, shown in the overview's Failed column),
 *   and counting it would move the bounce rate with an outage of our own. Queued, held, sending
 *   and discarded messages have not left yet or never will.
 * - delivered: `delivered` + `complained`: a complaint is made about mail that arrived in an
 *   inbox, after its delivery. The denominator of the complaint rate (as Gmail and Yahoo count
 *   their spam rate: of the mail delivered).
 * - bounced: `bounced` (hard bounces; a soft bounce is a timeline entry, its message retried).
 * - complained: `complained` (a recipient reported the message as spam; feedback loop or provider event).
 *
 * delivery_rate = delivered / sent, bounce_rate = bounced / sent, complaint_rate = complained /
 * delivered; each null when its denominator is 0 (shown "—", never NaN). Fractions from 0 to 1,
 * unrounded: the numerator and denominator are beside them.
 */

/** Message counts by current status; a missing status counts 0. */
export type StatusCounts = Readonly<Partial<Record<MessageStatus, number>>>;

export interface Rates {
  /** sent + delivered + bounced + complained: the delivery and bounce rates' denominator. */
  sent: number;
  /** delivered + complained: the delivery rate's numerator, the complaint rate's denominator. */
  delivered: number;
  bounced: number;
  complained: number;
  delivery_rate: number | null;
  bounce_rate: number | null;
  complaint_rate: number | null;
}

const ratio = (n: number, d: number): number | null => (d === 0 ? null : n / d);

/** The rates of messages counted by status (see above). */
export function messageRates(counts: StatusCounts): Rates {
  const c = (s: MessageStatus): number => counts[s] ?? 0;
  const delivered = c('delivered') + c('complained');
  const bounced = c('bounced');
  const complained = c('complained');
  const sent = c('sent') + delivered + bounced;
  return {
    sent,
    delivered,
    bounced,
    complained,
    delivery_rate: ratio(delivered, sent),
    bounce_rate: ratio(bounced, sent),
    complaint_rate: ratio(complained, delivered),
  };
}

/**
 * Rows of (status, count), as the overview's day-by-status counts (src/storage/overview.ts),
 * summed by status: a day's rows, or a whole range's. Statuses unknown here are kept (and ignored by messageRates).
 */
export function countsByStatus(rows: Iterable<{ status: string; count: number }>): StatusCounts {
  const out: Partial<Record<string, number>> = {};
  for (const r of rows) out[r.status] = (out[r.status] ?? 0) + r.count;
  return out;
}
