import type { Redis } from 'ioredis';
import type { Config } from '../config/env.js';
import type { Clock } from '../domain/clock.js';
import type { RedisCircuit } from '../net/redis-circuit.js';
import type { Metrics } from '../observability/metrics.js';
import { LimiterBackend, type ProtectionLogger } from './backend.js';
import { CaptchaGuard } from './captcha.js';
import { RateLimits } from './rate-limits.js';
import { MemoryLimiterStore, RedisLimiterStore, type LimiterStore } from './store.js';
import { TurnstileClient, type CaptchaVerifier } from './turnstile-client.js';

export { ipBucket } from './client-ip.js';
export type { LimitScope, RecipientCharge } from './rate-limits.js';
export { PLAN_REQUESTS_PER_SECOND, RateLimits } from './rate-limits.js';
export { CaptchaGuard } from './captcha.js';
export type { CaptchaVerifier } from './turnstile-client.js';

/** The protection services of one API process: rate limits and the CAPTCHA check. */
export interface Protection {
  limits: RateLimits;
  captcha: CaptchaGuard;
  /** Where counters and used CAPTCHA tokens live: 'memory' (one process) or 'redis' (shared). */
  backend: 'memory' | 'redis';
}

export interface ProtectionOptions {
  config: Config;
  clock: Clock;
  metrics?: Metrics | undefined;
  logger?: ProtectionLogger | undefined;
  /** Shares every limit and used token across processes; without it they live in this process. */
  redis?: Redis | undefined;
  /** The process's circuit in front of `redis`: while Redis is down, checks do not wait for it. */
  redisCircuit?: RedisCircuit | undefined;
  /** Prefix of every Redis key (default `mailroom:`): deployments or tests sharing one Redis. */
  keyPrefix?: string | undefined;
  /** Another store (tests); wins over `redis`. */
  store?: LimiterStore | undefined;
  /** Another CAPTCHA verifier (tests); default siteverify at MAILROOM_TURNSTILE_VERIFY_URL. */
  verifier?: CaptchaVerifier | undefined;
}

export function createProtection(options: ProtectionOptions): Protection {
  const { config, clock } = options;
  const store =
    options.store ??
    (options.redis !== undefined
      ? new RedisLimiterStore(options.redis, options.keyPrefix ?? 'mailroom:', options.redisCircuit)
      : new MemoryLimiterStore(clock));
  const backend = new LimiterBackend(store, config.limits.backendTimeoutMs, options.metrics, options.logger, clock);
  const verifier = options.verifier ?? new TurnstileClient(config.turnstile.verifyUrl, config.turnstile.timeoutMs);
  return {
    limits: new RateLimits(backend, clock, config.limits),
    captcha: new CaptchaGuard(verifier, backend, config),
    backend: store instanceof MemoryLimiterStore ? 'memory' : 'redis',
  };
}
