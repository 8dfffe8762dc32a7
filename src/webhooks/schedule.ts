/** The schedule and its parsing are read with the environment (src/config/env-sections.ts). */
export { DEFAULT_RETRY_SCHEDULE_SECONDS, MAX_DELAY_SECONDS, parseRetrySchedule } from '../config/env-sections.js';

/** Jitter: up to 10% on top of the delay, never before it, so retries of a burst spread out. */
const JITTER = 0.1;

/**
 * When attempt `attemptsMade + 1` falls due after attempt `attemptsMade` failed at `now`;
 * undefined once the schedule is used up (the delivery is then `failed`). Entry 0 is the delay
 * before the first attempt: always 0 (parseRetrySchedule), the outbox makes a delivery due when
 * its event is written.
 */
export function nextAttemptAt(
  schedule: readonly number[],
  attemptsMade: number,
  now: number,
  random: () => number = Math.random,
): number | undefined {
  const delaySeconds = schedule[attemptsMade];
  if (delaySeconds === undefined) return undefined;
  const delayMs = delaySeconds * 1000;
  return now + delayMs + Math.floor(delayMs * JITTER * random());
}
