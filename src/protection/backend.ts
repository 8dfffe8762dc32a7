import type { Clock } from '../domain/clock.js';
import { ApiError } from '../errors/api-error.js';
import { RedisUnavailable } from '../net/redis-circuit.js';
import type { Metrics } from '../observability/metrics.js';
import type { LimiterStore } from './store.js';

/** The little of pino / Fastify's logger this module uses. */
export interface ProtectionLogger {
  warn(obj: object, msg: string): void;
}

/** How long a client is told to wait after a 503 caused by an unreachable limit store. */
const BACKEND_RETRY_AFTER_SECONDS = 5;
/** At most one log line per scope in this period while the store keeps failing. */
const LOG_EVERY_MS = 10_000;

/**
 * Calls into the limit store with a deadline, and decides what a failure means:
 * `failOpen` (private keys: their owner is known and accountable) lets the request continue,
 * otherwise (public keys: anyone may hold one) the request is refused with 503
 * `service_unavailable`. Either way the failure is counted in
 * `mailroom_rate_limit_backend_errors_total{scope}` and logged (throttled), except while the
 * Redis circuit is open (RedisUnavailable: the store was not even asked, so no wait): the
 * circuit logs one line when Redis goes down and one when it is back.
 */
export class LimiterBackend {
  private readonly lastLog = new Map<string, { at: number; suppressed: number }>();

  constructor(
    readonly store: LimiterStore,
    private readonly timeoutMs: number,
    private readonly metrics: Metrics | undefined,
    private readonly logger: ProtectionLogger | undefined,
    /** Times the throttling of log lines, like every other time in protection/. */
    private readonly clock: Clock,
  ) {}

  /** Runs `fn`; on a store failure returns `fallback` when failing open, else throws 503. */
  async call<T>(scope: string, failOpen: boolean, fallback: T, fn: (store: LimiterStore) => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        fn(this.store),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`rate-limit store did not answer within ${this.timeoutMs} ms`)),
            this.timeoutMs,
          );
        }),
      ]);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      this.failed(scope, failOpen, err);
      if (failOpen) return fallback;
      throw new ApiError('service_unavailable', {
        message: 'Rate limits cannot be checked right now; public-key requests are refused until they can. Retry later.',
        details: { reason: 'rate_limit_store_unavailable' },
        headers: { 'retry-after': String(BACKEND_RETRY_AFTER_SECONDS) },
      });
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  private failed(scope: string, failOpen: boolean, err: unknown): void {
    this.metrics?.rateLimitBackendErrors.inc({ scope });
    if (err instanceof RedisUnavailable) return;
    const now = this.clock.now();
    const last = this.lastLog.get(scope);
    if (last !== undefined && now - last.at < LOG_EVERY_MS) {
      last.suppressed++;
      return;
    }
    this.lastLog.set(scope, { at: now, suppressed: 0 });
    this.logger?.warn(
      {
        scope,
        outcome: failOpen ? 'allowed (fail open)' : 'refused with 503 (fail closed)',
        err: err instanceof Error ? err.message : String(err),
        suppressed_since_last_log: last?.suppressed ?? 0,
      },
      'rate-limit store unavailable',
    );
  }
}
