/**
 * The retry schedule of outbound webhooks (issue 13): the delay before each attempt, in seconds.
 * The default, 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, spans ≈ 27 h 35 min: an endpoint
 * down for a day still gets every event. MAILROOM_WEBHOOK_RETRY_SCHEDULE replaces it (tests run
 * with "0,1,1").
 */
export const DEFAULT_RETRY_SCHEDULE_SECONDS: readonly number[] = Object.freeze([0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000]);

/** 48 h: a longer single wait is more likely a typo (minutes for seconds) than a wish. */
export const MAX_DELAY_SECONDS = 172_800;

/** Jitter: up to 10% on top of the delay, never before it, so retries of a burst spread out. */
const JITTER = 0.1;

/**
 * The schedule in `raw` (comma-separated whole seconds), or the reason it is refused. The first
 * entry is the first attempt's delay, and mailroom makes the first attempt as soon as the event
 * is written (the outbox makes its delivery due then): it must be 0, so that a schedule never
 * says something mailroom does not do.
 */
export function parseRetrySchedule(raw: string): { ok: true; seconds: number[] } | { ok: false; problem: string } {
  const parts = raw.split(',').map((s) => s.trim());
  if (parts.length === 0 || parts.some((p) => !/^\d+$/.test(p) || Number(p) > MAX_DELAY_SECONDS)) {
    return { ok: false, problem: `MAILROOM_WEBHOOK_RETRY_SCHEDULE must be comma-separated whole seconds from 0 to ${MAX_DELAY_SECONDS} (e.g. "0,5,300"), got "${raw}"` };
  }
  if (parts[0] !== undefined && Number(parts[0]) !== 0) {
    return { ok: false, problem: `MAILROOM_WEBHOOK_RETRY_SCHEDULE's first entry is the first attempt's delay and must be 0 (the first attempt is made at once; the retries follow), got "${raw}"` };
  }
  return { ok: true, seconds: parts.map(Number) };
}

/**
 * When attempt `attemptsMade + 1` falls due after attempt `attemptsMade` failed at `now`;
 * undefined once the schedule is used up (the delivery is then `failed`). Entry 0 is the delay
 * before the first attempt: always 0 (parseRetrySchedule), the outbox makes a delivery due when
 * its event is written.
 */
export function nextAttemptAt(schedule: readonly number[], attemptsMade: number, now: number, random: () => number = Math.random): number | undefined {
  const delaySeconds = schedule[attemptsMade];
  if (delaySeconds === undefined) return undefined;
  const delayMs = delaySeconds * 1000;
  return now + delayMs + Math.floor(delayMs * JITTER * random());
}
