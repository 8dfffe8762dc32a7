/**
 * The overview's rates as an operator reads them (issue 29). The arithmetic is the server's
 * (src/domain/rates.ts: delivery = delivered / sent, bounce = bounced / sent, complaint =
 * complained / delivered); here only how a rate is written and which messages each figure counts,
 * for the links to the Messages page. Pure: unit-tested in test/ui/rates.test.ts.
 */
/**
 * `1,000`, as formatCount writes it, with one formatter made once: `toLocaleString('en-US')` makes
 * one per call (18 µs against 3.5 µs in node 20), and a 90-day table writes ~500 counts.
 */
const COUNT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
export const formatRateCount = (n: number): string => COUNT.format(Math.round(n));

/** The rate figures a day or the whole range carries (the admin API's `rates.range` and `rates.daily[]`). */
export interface RateFigures {
  sent: number;
  delivered: number;
  bounced: number;
  complained: number;
  delivery_rate: number | null;
  bounce_rate: number | null;
  complaint_rate: number | null;
}

/**
 * The statuses each figure counts, as the Messages page's `status` filter takes them: a complained
 * message was delivered first; sent counts every message its service took.
 */
export const STATUSES_OF = {
  sent: ['sent', 'delivered', 'bounced', 'complained'],
  delivered: ['delivered', 'complained'],
  bounced: ['bounced'],
  complained: ['complained'],
} as const;

/**
 * A fraction as a percentage: one decimal (97.9%), two under 1% (0.12%), where complaint rates
 * live (mailbox providers' limits are 0.1% and 0.3%). Never rounded to 0% or 100% when it is not:
 * 0.00004 is "<0.01%", 0.9996 "99.9%". Null (no denominator) is an em dash.
 */
export function formatPercent(rate: number | null): string {
  if (rate === null || !Number.isFinite(rate)) return '—';
  if (rate <= 0) return '0%';
  if (rate >= 1) return '100%';
  const p = rate * 100;
  if (p < 0.01) return '<0.01%';
  if (p < 1) return `${p.toFixed(2)}%`;
  const one = p.toFixed(1);
  return one === '100.0' ? '99.9%' : `${one}%`;
}

/** `2.1% (21 of 1,000)`; an em dash alone when the denominator is 0. */
export function formatRate(rate: number | null, numerator: number, denominator: number): string {
  if (rate === null || denominator === 0) return '—';
  return `${formatPercent(rate)} (${formatRateCount(numerator)} of ${formatRateCount(denominator)})`;
}

export interface RateCell {
  label: string;
  /** The figure the rate counts (the link's messages). */
  numerator: keyof typeof STATUSES_OF;
  denominator: keyof typeof STATUSES_OF;
  rate: (f: RateFigures) => number | null;
}

/** The three rates in the order they are shown. */
export const RATES: readonly RateCell[] = [
  { label: 'Delivery rate', numerator: 'delivered', denominator: 'sent', rate: (f) => f.delivery_rate },
  { label: 'Bounce rate', numerator: 'bounced', denominator: 'sent', rate: (f) => f.bounce_rate },
  { label: 'Complaint rate', numerator: 'complained', denominator: 'delivered', rate: (f) => f.complaint_rate },
];
