import { Redis } from 'ioredis';
import pino from 'pino';
import type { Config } from '../config/env.js';
import { systemClock } from '../domain/clock.js';
import { LocalPacer, RedisPacer, type Pacer } from '../delivery/pacing.js';
import { DeliveryWorker } from '../delivery/worker.js';
import { openBlobStore, type OpenedBlobs } from '../blobs/index.js';
import { createMetrics, type Metrics } from '../observability/metrics.js';
import { TURNSTILE_TEST_SECRETS } from '../protection/captcha.js';
import { createProtection, type Protection } from '../protection/index.js';
import { openStore, type Store } from '../storage/store.js';

/** The long-lived parts a process needs, built once from config (the composition root). */
export interface Runtime {
  store: Store;
  metrics: Metrics;
  pacer: Pacer;
  redis: Redis | undefined;
  /** Rate limits and CAPTCHA: on the shared Redis when MAILROOM_REDIS_URL is set, else in memory. */
  protection: Protection;
  blobs: OpenedBlobs;
  logger: pino.Logger;
  createWorker(): DeliveryWorker;
  close(): Promise<void>;
}

export async function createRuntime(config: Config): Promise<Runtime> {
  const logger = pino({ level: config.logLevel });
  const store = await openStore(config.databaseUrl, { clock: systemClock, warn: (message) => logger.warn({ component: 'store' }, message) });
  const redis = config.redisUrl === undefined ? undefined : new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true });
  redis?.on('error', (err) => logger.warn({ err: err.message }, 'redis'));
  const metrics = createMetrics(() => store.queue.depth(systemClock.now()));
  const pacer: Pacer = redis === undefined ? new LocalPacer(systemClock) : new RedisPacer(redis, systemClock);
  const blobs = openBlobStore({ blobUrl: config.blobUrl, dataDir: config.dataDir, baseUrl: config.baseUrl });
  const protection = createProtection({ config, clock: systemClock, metrics, logger: logger.child({ component: 'protection' }), redis });
  if (config.env === 'production') {
    if (redis === undefined) logger.info('MAILROOM_REDIS_URL is not set: rate limits and used CAPTCHA tokens are kept in this process only');
    const shared = config.turnstile.secretKey;
    if (shared !== undefined && TURNSTILE_TEST_SECRETS.has(shared)) {
      logger.warn('MAILROOM_TURNSTILE_SECRET_KEY is a Cloudflare test secret: the shared mobile widget refuses every token in production');
    }
  }
  return {
    store,
    metrics,
    pacer,
    redis,
    protection,
    logger,
    blobs,
    createWorker: () => new DeliveryWorker(
      {
        store, clock: systemClock, dataDir: config.dataDir, pacer, metrics, logger: logger.child({ component: 'worker' }),
        blobs: blobs.blobs, retentionDays: config.retentionDays,
      },
      { leaseMs: config.worker.leaseMs, batchSize: config.worker.batchSize, pollMs: config.worker.pollMs, reapEveryMs: Math.min(10_000, config.worker.leaseMs), renewEveryMs: Math.min(60_000, Math.floor(config.worker.leaseMs / 3)) },
    ),
    close: async () => {
      await store.close();
      if (redis !== undefined) await redis.quit().catch(() => undefined);
    },
  };
}

/** Resolves on the first SIGTERM or SIGINT. */
export function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}
