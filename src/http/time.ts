/** Timestamps leave the API as ISO 8601 UTC strings; they are stored as epoch milliseconds. */
export const iso = (ms: number): string => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

const DAY_MS = 86_400_000;
const PLAIN_DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A time bound of a query (`from`, `to`) as epoch milliseconds, the upper bound exclusive. A
 * date-time names its instant. A plain date (YYYY-MM-DD) names a whole UTC day: as a lower bound
 * its first millisecond, as an upper bound the first millisecond of the next day, so the day
 * itself is included to its end (`to=2030-01-01` keeps 2030-01-01T23:59:59.999Z). Undefined
 * when the text names no instant Date.parse can read (the caller answers 400).
 */
export function queryBound(value: string, side: 'lower' | 'upper'): number | undefined {
  if (PLAIN_DATE.test(value)) {
    // Parsed as a date-time at midnight UTC: Date.UTC would read years 0000–0099 as 1900–1999.
    const start = Date.parse(`${value}T00:00:00.000Z`);
    if (!Number.isFinite(start)) return undefined;
    return side === 'lower' ? start : start + DAY_MS;
  }
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}
