import type { Redis, RedisOptions } from 'ioredis';
import { RedisCircuit, type RedisHealthChange } from './redis-circuit.js';

/**
 * The options of the connection a process opens from MAILROOM_REDIS_URL. ioredis's defaults
 * queue a command while it reconnects and fail it only after 20 reconnections; the 2 retries
 * used before still held each command 0.5–3.3 s while Redis was down (measured: 55 ms, then
 * 450 ms more per command as the reconnect delay grew to its 2 s). Here a command in flight
 * when the connection drops fails at once (`maxRetriesPerRequest: 0`), and once connected
 * (failFastOnceReady) a command sent while reconnecting fails at once too. Reconnection keeps
 * ioredis's default pace: every 50 ms × attempts, at most every 2 s.
 */
export const REDIS_CLIENT_OPTIONS: RedisOptions = { maxRetriesPerRequest: 0, enableOfflineQueue: true };

/**
 * Queues commands only until the first connection is ready (a request served in the
 * milliseconds before must not count as Redis down), then never again.
 */
export function failFastOnceReady(client: Redis): void {
  client.once('ready', () => {
    client.options.enableOfflineQueue = false;
  });
}

export interface RedisHealthLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * The circuit in front of a process's Redis connection: one line when Redis is found down, one
 * when it answers again (with how long it was down), and `mailroom_redis_available` from it.
 */
export function guardRedis(
  redis: Redis,
  options: {
    clock: { now(): number };
    timeoutMs: number;
    logger: RedisHealthLogger;
    metrics: { redis: { available?: () => boolean } };
  },
): RedisCircuit {
  const circuit = new RedisCircuit({
    ping: () => redis.ping(),
    clock: options.clock,
    timeoutMs: options.timeoutMs,
    onChange: (change) => logRedisHealth(options.logger, change),
  });
  options.metrics.redis.available = () => circuit.available;
  return circuit;
}

function logRedisHealth(logger: RedisHealthLogger, change: RedisHealthChange): void {
  if (change.state === 'down') {
    logger.warn(
      { component: 'redis', err: change.reason, failures: change.failures, next_probe_ms: change.nextProbeMs },
      'redis unavailable: not asked until a background probe answers (every 1 s doubling to 30 s); meanwhile ' +
        'rate limits let private keys through and refuse public keys with 503, and circuit breakers act as closed',
    );
  } else {
    logger.info({ component: 'redis', lasted_ms: change.downForMs, probes: change.probes }, 'redis available again');
  }
}
