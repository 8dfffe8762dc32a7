// The outbound webhooks' settings live here, where the environment is read, so that config/
// imports nothing of the rest of src/ (src/webhooks/types.ts and schedule.ts re-export them).

/** Where a URL may point: production refuses http and private addresses unless allowed. */
export interface WebhookUrlPolicy {
  /** MAILROOM_ENV=production */
  production: boolean;
  /** MAILROOM_WEBHOOK_ALLOW_PRIVATE=true */
  allowPrivate: boolean;
}

/** The webhooks' settings, parsed once from the environment (Config.webhooks). */
export interface WebhookSettings {
  /** MAILROOM_WEBHOOK_RETRY_SCHEDULE: delay before each attempt, seconds; default 0,5,300,1800,7200,18000,36000,36000. */
  retryScheduleSeconds: readonly number[];
  /** Per attempt; 15 s (MAILROOM_WEBHOOK_TIMEOUT_SECONDS, for tests). */
  attemptTimeoutMs: number;
  /** How long the previous secret keeps signing after a rotation (MAILROOM_WEBHOOK_SECRET_GRACE_SECONDS, 24 h). */
  secretGraceMs: number;
  /** An endpoint whose every delivery failed this long is disabled (MAILROOM_WEBHOOK_DISABLE_AFTER_SECONDS, 5 days). */
  disableAfterMs: number;
  /** In-flight attempts per endpoint in one process (MAILROOM_WEBHOOK_ENDPOINT_CONCURRENCY, 4). */
  endpointConcurrency: number;
  /** In-flight attempts in one process (MAILROOM_WEBHOOK_MAX_IN_FLIGHT, 64). */
  maxInFlight: number;
  urlPolicy: WebhookUrlPolicy;
}

/**
 * The retry schedule of outbound webhooks (issue 13): the delay before each attempt, in seconds.
 * The default, 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, spans ≈ 27 h 35 min: an endpoint
 * down for a day still gets every event. MAILROOM_WEBHOOK_RETRY_SCHEDULE replaces it (tests run
 * with "0,1,1").
 */
export const DEFAULT_RETRY_SCHEDULE_SECONDS: readonly number[] = Object.freeze([0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000]);

/** 48 h: a longer single wait is more likely a typo (minutes for seconds) than a wish. */
export const MAX_DELAY_SECONDS = 172_800;

/**
 * The schedule in `raw` (comma-separated whole seconds), or the reason it is refused. The first
 * entry is the first attempt's delay, and mailroom makes the first attempt as soon as the event
 * is written (the outbox makes its delivery due then): it must be 0, so that a schedule never
 * says something mailroom does not do.
 */
export function parseRetrySchedule(raw: string): { ok: true; seconds: number[] } | { ok: false; problem: string } {
  const parts = raw.split(',').map((s) => s.trim());
  if (parts.length === 0 || parts.some((p) => !/^\d+$/.test(p) || Number(p) > MAX_DELAY_SECONDS)) {
    return {
      ok: false,
      problem:
        `MAILROOM_WEBHOOK_RETRY_SCHEDULE must be comma-separated whole ` +
        `seconds from 0 to ${MAX_DELAY_SECONDS} (e.g. "0,5,300"), got "${raw}"`,
    };
  }
  if (parts[0] !== undefined && Number(parts[0]) !== 0) {
    return {
      ok: false,
      problem:
        `MAILROOM_WEBHOOK_RETRY_SCHEDULE's first entry is the first attempt's delay and ` +
        `must be 0 (the first attempt is made at once; the retries follow), got "${raw}"`,
    };
  }
  return { ok: true, seconds: parts.map(Number) };
}

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
