import type { KeyMode } from './types.js';

/**
 * Retention (MAILROOM_RETENTION_DAYS): a message created before the cutoff is past it. The
 * worker purges such messages, and the API answers for them as for ids that never existed
 * (history starts at the cutoff; a status lookup is 404), so that what the API shows never
 * depends on whether the purge has run yet. All three ask this one function.
 */
export function retentionCutoff(now: number, retentionDays: number): number {
  return now - retentionDays * 86_400_000;
}

/** Whether a message created at `createdAt` is past retention at `now`. */
export function pastRetention(createdAt: number, now: number, retentionDays: number): boolean {
  return createdAt < retentionCutoff(now, retentionDays);
}

/**
 * The retention of a message of this mode (issue 27): test messages keep
 * MAILROOM_TEST_RETENTION_DAYS (default 7), never longer than live ones.
 */
export function retentionDaysOf(mode: KeyMode, c: { retentionDays: number; testRetentionDays: number }): number {
  return mode === 'test' ? Math.min(c.testRetentionDays, c.retentionDays) : c.retentionDays;
}
