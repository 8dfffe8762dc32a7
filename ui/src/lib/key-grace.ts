/**
 * The key rotation form's grace period (components/key-rotate.tsx), as an amount in hours or days.
 * Pure: unit-tested in test/ui/key-grace.test.ts.
 */
export const UNIT_SECONDS = { hours: 3600, days: 86_400 } as const;
export type GraceUnit = keyof typeof UNIT_SECONDS;

/** Longest grace period the server allows (src/admin/keys.ts MAX_GRACE_SECONDS: 30 days). */
export const MAX_GRACE_SECONDS = 30 * 86_400;

/**
 * The amount typed, carried over to another unit so the period stays (about) the same: 24 hours
 * become 1 day, 2 days 48 hours. Hours that are not whole days round to the nearest day, at least
 * 1 for a period above 0; never above the server's 30 days. Text that is not a whole number stays.
 */
export function convertGrace(amount: string, from: GraceUnit, to: GraceUnit): string {
  const text = amount.trim();
  if (from === to || !/^\d+$/.test(text)) return amount;
  const seconds = Number(text) * UNIT_SECONDS[from];
  const max = MAX_GRACE_SECONDS / UNIT_SECONDS[to];
  const converted = seconds / UNIT_SECONDS[to];
  const whole = seconds > 0 ? Math.max(1, Math.round(converted)) : 0;
  return String(Math.min(whole, max));
}
