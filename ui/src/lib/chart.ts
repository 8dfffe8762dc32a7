/**
 * The overview's messages-per-day chart, as pure geometry (no DOM): which segments each day's
 * bar stacks, a linear scale with round ticks, where bars and date labels go, and the sentence
 * a screen reader hears instead of the picture. The component in components/chart.tsx only
 * draws what these return.
 */

/** One UTC day of GET …/overview's `daily`. */
export interface DayCounts {
  date: string;
  accepted: number;
  delivered: number;
  bounced: number;
  complained: number;
  failed: number;
  held: number;
}

/**
 * The stacked series, bottom to top. `accepted` counts every message created that day and the
 * others are how many of those are now in that status, so they are parts of it: the bar's
 * height is `accepted`, and `other` is what is left (queued, sending, or sent without a
 * delivery report), so no message is drawn twice.
 */
export const SERIES = [
  { key: 'delivered', label: 'Delivered', colour: '#009e73' },
  { key: 'other', label: 'In progress or sent', colour: '#56b4e9' },
  { key: 'held', label: 'Held', colour: '#e69f00' },
  { key: 'bounced', label: 'Bounced', colour: '#d55e00' },
  { key: 'complained', label: 'Complained', colour: '#cc79a7' },
  { key: 'failed', label: 'Failed', colour: '#3d3d3d' },
] as const;
export type SeriesKey = (typeof SERIES)[number]['key'];

export interface Segment {
  key: SeriesKey;
  value: number;
  /** Cumulative counts below and at the top of this segment. */
  from: number;
  to: number;
}

export interface StackedDay {
  date: string;
  total: number;
  segments: Segment[];
}

const count = (n: number): number => (Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);

/** Each day's segments, empty ones left out; the total is at least the sum of the parts. */
export function stackDays(daily: readonly DayCounts[]): StackedDay[] {
  return daily.map((day) => {
    const parts = count(day.delivered) + count(day.held) + count(day.bounced) + count(day.complained) + count(day.failed);
    const values: Record<SeriesKey, number> = {
      delivered: count(day.delivered),
      other: Math.max(0, count(day.accepted) - parts),
      held: count(day.held),
      bounced: count(day.bounced),
      complained: count(day.complained),
      failed: count(day.failed),
    };
    const segments: Segment[] = [];
    let at = 0;
    for (const s of SERIES) {
      const value = values[s.key];
      if (value === 0) continue;
      segments.push({ key: s.key, value, from: at, to: at + value });
      at += value;
    }
    return { date: day.date, total: at, segments };
  });
}

/**
 * Round tick values from 0 up to at least `max`, about `count` of them, stepping by 1, 2 or 5
 * times a power of ten (whole numbers only: these are message counts). An empty chart still
 * gets an axis 0..1.
 */
export function niceTicks(max: number, count = 5): number[] {
  const top = Math.max(1, Math.ceil(max));
  const rough = top / Math.max(1, count - 1);
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power);
  const ticks: number[] = [];
  for (let v = 0; ; v += step) {
    ticks.push(v);
    if (v >= top) break;
  }
  return ticks;
}

/** A linear map from [d0, d1] to [r0, r1] (a zero-width domain maps to r0). */
export function linearScale(d0: number, d1: number, r0: number, r1: number): (v: number) => number {
  const span = d1 - d0;
  return (v) => (span === 0 ? r0 : r0 + ((v - d0) / span) * (r1 - r0));
}

/** Where bar `i` of `n` starts and how wide it is, across `width` with a gap of `gapRatio` of each slot. */
export function barSlot(i: number, n: number, width: number, gapRatio = 0.2): { x: number; width: number } {
  const slot = width / Math.max(1, n);
  const gap = Math.min(slot * gapRatio, 12);
  return { x: i * slot + gap / 2, width: Math.max(1, slot - gap) };
}

/** Which bars get a date label: all of 7, about 7 of 30 or 90; always the last (today). */
export function labelledDays(n: number, most = 8): Set<number> {
  const every = Math.max(1, Math.ceil(n / most));
  const out = new Set<number>();
  for (let i = n - 1; i >= 0; i -= every) out.add(i);
  return out;
}

/** `2026-11-19` → `Nov 19` (UTC, language-neutral enough for an axis). */
export function shortDate(date: string): string {
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (m === null) return date;
  return `${months[Number(m[2]) - 1] ?? m[2]} ${Number(m[3])}`;
}

/** Totals over the whole range, for the summary and the legend. */
export function totals(daily: readonly DayCounts[]): Omit<DayCounts, 'date'> {
  const t = { accepted: 0, delivered: 0, bounced: 0, complained: 0, failed: 0, held: 0 };
  for (const d of daily) {
    t.accepted += count(d.accepted);
    t.delivered += count(d.delivered);
    t.bounced += count(d.bounced);
    t.complained += count(d.complained);
    t.failed += count(d.failed);
    t.held += count(d.held);
  }
  return t;
}

/** What the chart says, as one sentence (the SVG's aria-label). */
export function chartSummary(daily: readonly DayCounts[]): string {
  if (daily.length === 0) return 'Messages per day: no data.';
  const first = daily[0] as DayCounts;
  const last = daily[daily.length - 1] as DayCounts;
  const t = totals(daily);
  const busiest = daily.reduce((a, b) => (count(b.accepted) > count(a.accepted) ? b : a), first);
  const range = `${daily.length} day${daily.length === 1 ? '' : 's'}, ${first.date} to ${last.date}`;
  if (t.accepted === 0) return `Messages per day over ${range}: none accepted.`;
  return (
    `Messages per day over ${range}: ${t.accepted} accepted, of which ${t.delivered} delivered, ${t.held} held, ${t.bounced} ` +
    `bounced, ${t.complained} complained, ${t.failed} failed. Busiest day ${busiest.date} with ${count(busiest.accepted)}.`
  );
}
