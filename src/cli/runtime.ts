import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import pino from 'pino';
import type { Config } from '../config/env.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { exposeBreakers, LocalBreakers, type Breakers } from '../delivery/breaker.js';
import { RedisBreakers } from '../delivery/breaker-redis.js';
import { breakerAlerts } from '../alerts/breaker-alerts.js';
import { LocalPacer, RedisPacer, type Pacer } from '../delivery/pacing.js';
import { DeliveryWorker } from '../delivery/worker.js';
import { openBlobStore, type OpenedBlobs } from '../blobs/index.js';
import { createMetrics, type Metrics } from '../observability/metrics.js';
import { TURNSTILE_TEST_SECRETS } from '../protection/captcha.js';
import { createProtection, type Protection, type ProtectionOptions } from '../protection/index.js';
import { failFastOnceReady, guardRedis, REDIS_CLIENT_OPTIONS } from '../net/redis-client.js';
import { RETRY_AFTER_SECONDS } from '../errors/unavailable.js';
import { openStore, type Store } from '../storage/store.js';
import { nudgingNotifier } from '../events/notifier.js';
import { recordProviderEvents } from '../events/record.js';
import { startInboundListener, type InboundListener } from '../inbound/listener.js';
import { storeInboundDeps } from '../inbound/wiring.js';
import { verpSecret } from '../delivery/verp.js';
import type { EventNotifier } from '../events/types.js';
import { WebhookDispatcher } from '../webhooks/dispatcher.js';
import { createWebhookHttp } from '../webhooks/http-post.js';
import type { WebhookHttp, WebhookSettings } from '../webhooks/types.js';
import { Wakeup } from '../webhooks/wakeup.js';

const require = createRequire(import.meta.url);

/**
 * ioredis, loaded only when MAILROOM_REDIS_URL is set: its ~35 modules cost a server without
 * Redis ~2 MB of heap and more of RSS (code, their source text). It ships CommonJS only, so
 * `require` loads the one copy an `import` would (its class, for instanceof, is the same).
 */
function redisClass(): typeof Redis {
  return (require('ioredis') as typeof import('ioredis')).Redis;
}

/**
 * What buildServices needs besides config. Processes pass the store they opened and the system
 * clock; tests pass a fresh store, a manual clock and, where a test is about them, the parts below.
 */
export interface ServiceDeps {
  store: Store;
  clock: Clock;
  /** Default: pino at MAILROOM_LOG_LEVEL. */
  logger?: pino.Logger | undefined;
  /**
   * A Redis connection the caller owns and closes (tests). Default: one opened from
   * MAILROOM_REDIS_URL (none when unset), closed by `close()`.
   */
  redis?: Redis | undefined;
  /** Counters the caller also reads (tests: one registry for an app and a worker). */
  metrics?: Metrics | undefined;
  /** Attachment storage other than config's (tests: a fake S3). */
  blobs?: OpenedBlobs | undefined;
  /**
   * Where recorded events after hand-off go besides waking this process's webhook dispatcher
   * (tests: a recording one).
   */
  notifier?: EventNotifier | undefined;
  /** The webhooks' HTTP client (tests: one of their own). Default: createWebhookHttp from config, closed by `close()`. */
  webhookHttp?: WebhookHttp | undefined;
  /** The rest of createProtection's options: another limiter store (the bench), verifier, key prefix or logger (tests). */
  protection?: Pick<ProtectionOptions, 'store' | 'verifier' | 'keyPrefix' | 'logger'> | undefined;
}

/** The long-lived services of a process, built once from config (the composition root). */
export interface Services {
  store: Store;
  clock: Clock;
  metrics: Metrics;
  pacer: Pacer;
  /** Circuit breakers per service: shared through Redis when MAILROOM_REDIS_URL is set, else this process's. */
  breakers: Breakers;
  redis: Redis | undefined;
  /** Rate limits and CAPTCHA: on the shared Redis when MAILROOM_REDIS_URL is set, else in memory. */
  protection: Protection;
  blobs: OpenedBlobs;
  /** Every recorded event after hand-off is handed to it: it wakes the webhook dispatcher. */
  notifier: EventNotifier;
  /** Outbound webhooks: settings, the pooled HTTP client, and the dispatchers' wake-up. */
  webhooks: { settings: WebhookSettings; http: WebhookHttp; wakeup: Wakeup };
  logger: pino.Logger;
  /** Closes what was opened here (the Redis connection), not the store it was given. */
  close(): Promise<void>;
}

/**
 * The one place services are built: `mailroom serve`, `mailroom worker` and the tests' apps all
 * come through here, so the app and the worker share one Redis connection with one retry policy.
 */
export function buildServices(config: Config, deps: ServiceDeps): Services {
  const { store, clock } = deps;
  const logger = deps.logger ?? pino({ level: config.logLevel });
  const owned =
    deps.redis === undefined && config.redisUrl !== undefined
      ? // Commands fail at once while the connection is down, never queue (src/net/redis-client.ts).
        new (redisClass())(config.redisUrl, REDIS_CLIENT_OPTIONS)
      : undefined;
  const redis = deps.redis ?? owned;
  const metrics =
    deps.metrics ??
    createMetrics(
      () => store.queue.depth(clock.now()),
      () => store.webhookDeliveries.stats(clock.now()),
    );
  // One circuit for every user of the connection: while Redis is down none waits for it.
  const redisCircuit =
    redis === undefined ? undefined : guardRedis(redis, { clock, timeoutMs: config.limits.backendTimeoutMs, logger, metrics });
  if (owned !== undefined) {
    failFastOnceReady(owned);
    // A listener, so that no connection error ends the process. The first error after a
    // connection is logged at warn; the failed reconnections after it (one per 2 s while Redis is
    // down) at debug: the circuit logs the outage once (src/net/redis-client.ts).
    let told = false;
    owned.on('ready', () => {
      told = false;
    });
    owned.on('error', (err: Error) => {
      if (told) logger.debug({ component: 'redis', err: err.message }, 'redis connection error');
      else logger.warn({ component: 'redis', err: err.message }, 'redis connection error');
      told = true;
    });
  }
  const settings = config.webhooks;
  // Connections per origin as many as attempts per endpoint may run at once.
  const http =
    deps.webhookHttp ??
    createWebhookHttp({
      policy: settings.urlPolicy,
      timeoutMs: settings.attemptTimeoutMs,
      maxConnectionsPerOrigin: settings.endpointConcurrency,
    });
  const wakeup = new Wakeup();
  const breakers =
    redis === undefined
      ? new LocalBreakers(clock, config.breaker)
      : new RedisBreakers(redis, clock, { ...config.breaker, circuit: redisCircuit });
  exposeBreakers(metrics, breakers);
  // A breaker opening or closing is an alert of its organization (issue 29).
  breakers.onTransition = breakerAlerts(store, clock, logger.child({ component: 'alerts' })).onTransition;
  const protection = createProtection({
    config,
    clock,
    metrics,
    logger: logger.child({ component: 'protection' }),
    redis,
    redisCircuit,
    ...deps.protection,
  });
  return {
    store,
    clock,
    metrics,
    pacer: redis === undefined ? new LocalPacer(clock) : new RedisPacer(redis, clock, undefined, undefined, redisCircuit),
    breakers,
    redis,
    protection,
    blobs: deps.blobs ?? openBlobStore({ blobUrl: config.blobUrl, dataDir: config.dataDir, baseUrl: config.baseUrl }),
    notifier: nudgingNotifier(() => wakeup.nudge(), deps.notifier),
    webhooks: { settings, http, wakeup },
    logger,
    close: async () => {
      if (deps.webhookHttp === undefined) await http.close();
      redisCircuit?.stop();
      if (owned !== undefined) await owned.quit().catch(() => owned.disconnect());
    },
  };
}

/** A webhook dispatcher over a process's services (`mailroom worker`, serve's in-process worker, tests). */
export function createDispatcher(services: Services, pollMs?: number): WebhookDispatcher {
  const { store, clock, metrics, logger, webhooks } = services;
  return new WebhookDispatcher({
    store,
    clock,
    metrics,
    http: webhooks.http,
    settings: webhooks.settings,
    wakeup: webhooks.wakeup,
    logger: logger.child({ component: 'webhooks' }),
    ...(pollMs === undefined ? {} : { pollMs }),
  });
}

/**
 * The inbound SMTP listener (bounces and feedback reports to VERP addresses) over a process's
 * services: reports are matched by the token's message id alone (its MAC vouches for it) and
 * recorded like any provider event, before the 250. `secret`: the VERP tokens' (verpSecret).
 */
export function startInbound(
  services: Pick<Services, 'store' | 'clock' | 'metrics' | 'notifier' | 'logger'>,
  secret: string,
  options: NonNullable<Config['inboundSmtp']>,
): Promise<InboundListener> {
  const { store, clock, metrics, notifier, logger } = services;
  return startInboundListener(
    storeInboundDeps(store, {
      secret,
      clock,
      registry: metrics.registry,
      record: async (events) => {
        await recordProviderEvents(store, { clock, metrics, notifier, logger }, { orgId: null, serviceId: null }, events);
      },
      log: logger.child({ component: 'inbound-smtp' }),
    }),
    options,
  );
}

/** A process's services over the store it opened, and its delivery workers. */
export interface Runtime extends Services {
  createWorker(): DeliveryWorker;
  /** Outbound webhooks' dispatcher: runs wherever a delivery worker runs, and stops with it. */
  createDispatcher(): WebhookDispatcher;
  /** The inbound SMTP listener when MAILROOM_INBOUND_SMTP_PORT is set (`mailroom serve`), else undefined. */
  startInbound(): Promise<InboundListener | undefined>;
}

export async function createRuntime(config: Config): Promise<Runtime> {
  const logger = pino({ level: config.logLevel });
  const store = await openStore(config.databaseUrl, {
    clock: systemClock,
    warn: (message) => logger.warn({ component: 'store' }, message),
  });
  logStorageHealth(store, logger);
  const services = buildServices(config, { store, clock: systemClock, logger });
  if (config.env === 'production') {
    if (services.redis === undefined)
      logger.info('MAILROOM_REDIS_URL is not set: rate limits and used CAPTCHA tokens are kept in this process only');
    const shared = config.turnstile.secretKey;
    if (shared !== undefined && TURNSTILE_TEST_SECRETS.has(shared)) {
      logger.warn(
        'MAILROOM_TURNSTILE_SECRET_KEY is a Cloudflare test secret: the shared mobile widget refuses every token in production',
      );
    }
  }
  const { clock, pacer, breakers, metrics, blobs, notifier } = services;
  return {
    ...services,
    createWorker: () =>
      new DeliveryWorker(
        {
          store,
          clock,
          dataDir: config.dataDir,
          pacer,
          breakers,
          metrics,
          logger: logger.child({ component: 'worker' }),
          blobs: blobs.blobs,
          retentionDays: config.retentionDays,
          requestLogDays: config.requestLogDays,
          testMode: { simulatorDelayMs: config.simulatorDelayMs, testRetentionDays: config.testRetentionDays },
          // Simulator events wake this process's webhook dispatcher, as a provider's do.
          notifier,
        },
        {
          leaseMs: config.worker.leaseMs,
          batchSize: config.worker.batchSize,
          pollMs: config.worker.pollMs,
          reapEveryMs: Math.min(10_000, config.worker.leaseMs),
          renewEveryMs: Math.min(60_000, Math.floor(config.worker.leaseMs / 3)),
        },
      ),
    createDispatcher: () => createDispatcher(services),
    startInbound: async () =>
      config.inboundSmtp === undefined ? undefined : startInbound(services, verpSecret(config.dataDir), config.inboundSmtp),
    close: async () => {
      await store.close();
      await services.close();
    },
  };
}

/**
 * One line when the database goes away or the disk fills, one when it is over (with how long it
 * lasted): requests meanwhile answer 503 without a line each beyond the request log.
 */
function logStorageHealth(store: Store, logger: pino.Logger): void {
  store.health.listen(({ kind, state, message, lastedMs }) => {
    if (state === 'began') {
      logger.warn(
        { component: 'store', reason: kind, err: message },
        kind === 'database_unavailable'
          ? `database unavailable: requests that need it answer 503 service_unavailable ` +
              `(Retry-After ${RETRY_AFTER_SECONDS[kind]} s) and the worker pauses claiming, until it is back`
          : `storage full: writes answer 503 service_unavailable, reason ` +
              `storage_full (Retry-After ${RETRY_AFTER_SECONDS[kind]} s), until one succeeds`,
      );
    } else {
      logger.info(
        { component: 'store', reason: kind, lasted_ms: lastedMs },
        kind === 'database_unavailable' ? 'database available again' : 'storage takes writes again',
      );
    }
  });
}

/** Resolves on the first SIGTERM or SIGINT. */
export function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}
