import { DEFAULT_RETRY_SCHEDULE_SECONDS, parseRetrySchedule } from '../webhooks/schedule.js';
import type { WebhookSettings } from '../webhooks/types.js';

/** How loadConfig reads one variable (src/config/env.ts): a problem is recorded, never thrown. */
type ReadInt = (name: string, fallback: number, min: number, max: number) => number;

/**
 * Outbound webhooks' settings. The attempt timeout is 15 s by the issue; the variable exists so
 * tests (and operators of slow receivers) can move it. The per-endpoint and overall in-flight
 * limits are per process.
 */
export function webhookSettings(
  read: (name: string) => string | undefined,
  int: ReadInt,
  oneOf: <T extends string>(name: string, allowed: readonly T[], fallback: T) => T,
  problems: string[],
): WebhookSettings {
  const rawSchedule = read('MAILROOM_WEBHOOK_RETRY_SCHEDULE');
  let retryScheduleSeconds: readonly number[] = DEFAULT_RETRY_SCHEDULE_SECONDS;
  if (rawSchedule !== undefined) {
    const parsed = parseRetrySchedule(rawSchedule);
    if (parsed.ok) retryScheduleSeconds = parsed.seconds;
    else problems.push(parsed.problem);
  }
  return {
    retryScheduleSeconds,
    attemptTimeoutMs: int('MAILROOM_WEBHOOK_TIMEOUT_SECONDS', 15, 1, 300) * 1000,
    secretGraceMs: int('MAILROOM_WEBHOOK_SECRET_GRACE_SECONDS', 86_400, 0, 30 * 86_400) * 1000,
    disableAfterMs: int('MAILROOM_WEBHOOK_DISABLE_AFTER_SECONDS', 5 * 86_400, 1, 365 * 86_400) * 1000,
    endpointConcurrency: int('MAILROOM_WEBHOOK_ENDPOINT_CONCURRENCY', 4, 1, 100),
    maxInFlight: int('MAILROOM_WEBHOOK_MAX_IN_FLIGHT', 64, 1, 10_000),
    urlPolicy: {
      // Read raw: a bad MAILROOM_ENV is reported once, where `env` is parsed.
      production: read('MAILROOM_ENV') === 'production',
      allowPrivate: oneOf('MAILROOM_WEBHOOK_ALLOW_PRIVATE', ['true', 'false'] as const, 'false') === 'true',
    },
  };
}

/** Each service's circuit breaker; src/delivery/breaker.ts has the same shape as BreakerOptions. */
export interface BreakerSettings {
  /** Consecutive transient failures that open it… */
  readonly failures: number;
  /** …within this window. */
  readonly windowMs: number;
  /** An open breaker lets one probe message through after this long. */
  readonly halfOpenAfterMs: number;
}

/**
 * The defaults (5 in 60 s, half-open after 30 s). A relay that fails one message a
 * minute is flaky, not down, so the window bounds how far apart the failures may be.
 */
export function breakerSettings(int: ReadInt): BreakerSettings {
  return {
    failures: int('MAILROOM_BREAKER_FAILURES', 5, 1, 1000),
    windowMs: int('MAILROOM_BREAKER_WINDOW_SECONDS', 60, 1, 86_400) * 1000,
    halfOpenAfterMs: int('MAILROOM_BREAKER_HALF_OPEN_SECONDS', 30, 1, 86_400) * 1000,
  };
}
