import { LocalBreakers, exposeBreakers, type Breakers } from '../../src/delivery/breaker.js';
import { LocalPacer, type Pacer } from '../../src/delivery/pacing.js';
import type { RetryPolicy } from '../../src/delivery/retry.js';
import type { TransportFactory } from '../../src/delivery/transport.js';
import { DeliveryWorker } from '../../src/delivery/worker.js';
import { createMetrics, type Metrics } from '../../src/observability/metrics.js';
import type { Dialect } from '../../src/storage/dialect.js';
import { ADMIN_TOKEN, buildTestApp, testConfig } from './app.js';
import { type Closer, tempDir } from './cleanup.js';
import { setServiceSettingsText } from './db.js';
import { startSink, type Sink } from './smtp-sink.js';
import { freshStore, type TestStore } from './stores.js';
import { captureLogger, seedSmtpOrg, smtpService } from './delivery.js';

/**
 * Failover tests' setup: organization `acme` with two SMTP sinks as services, `primary` (the
 * default, failing over to `backup`) and `backup`; one breaker set shared by the worker(s),
 * /metrics and the admin API (exposed on the app's metrics before buildServices would add its own).
 */

/** Retries 10 s after a failure: sooner than the breaker's 30 s, so a retry finds it open. */
export const QUICK_RETRY: RetryPolicy = {
  baseMs: 10_000,
  factor: 1,
  maxDelayMs: 10_000,
  jitter: 0,
  maxAttempts: 10,
  maxAgeMs: 24 * 3_600_000,
};

export interface FailoverSetup extends TestStore {
  app: Awaited<ReturnType<typeof buildTestApp>>;
  metrics: Metrics;
  breakers: Breakers;
  primary: Sink;
  backup: Sink;
  dataDir: string;
  worker(extra?: {
    breakers?: Breakers;
    pacer?: Pacer;
    transports?: Readonly<Record<string, TransportFactory>>;
    retry?: RetryPolicy;
  }): DeliveryWorker;
  admin(url: string): Promise<Record<string, unknown>>;
}

export interface SetupOptions {
  /** Settings added to `primary` (default: failover to backup). */
  primarySettings?: Record<string, unknown>;
  primaryAuth?: { user: string; pass: string };
  breakers?: Breakers;
}

export async function failoverSetup(dialect: Dialect, closer: Closer, options: SetupOptions = {}): Promise<FailoverSetup> {
  const ts = await freshStore(dialect);
  closer.defer(() => ts.cleanup());
  const metrics = createMetrics();
  const breakers = options.breakers ?? new LocalBreakers(ts.clock);
  exposeBreakers(metrics, breakers);
  const app = await buildTestApp(testConfig(), { store: ts.store, clock: ts.clock, metrics });
  closer.defer(() => app.close());
  const primary = await startSink(
    { clock: ts.clock, ...(options.primaryAuth !== undefined ? { auth: options.primaryAuth } : {}) },
    closer,
  );
  const backup = await startSink({ clock: ts.clock }, closer);
  const primaryService = smtpService(primary.port, {
    id: 'primary',
    ...(options.primaryAuth !== undefined ? { user: options.primaryAuth.user, pass: 'wrong' } : {}),
  });
  await seedSmtpOrg(ts.store, primaryService, {
    services: [primaryService, smtpService(backup.port, { id: 'backup', default: false })],
  });
  const stored = await ts.store.services.get('acme', 'primary');
  await setServiceSettingsText(
    ts.store,
    'acme',
    'primary',
    JSON.stringify({ ...stored?.settings, ...(options.primarySettings ?? { failover: ['backup'] }) }),
  );
  const dataDir = tempDir(closer);
  return {
    ...ts,
    app,
    metrics,
    breakers,
    primary,
    backup,
    dataDir,
    worker: (extra = {}) => {
      const worker = new DeliveryWorker(
        {
          store: ts.store,
          clock: ts.clock,
          dataDir,
          metrics,
          logger: captureLogger(),
          retry: extra.retry ?? QUICK_RETRY,
          random: () => 0.5,
          pacer: extra.pacer ?? new LocalPacer(ts.clock),
          breakers: extra.breakers ?? breakers,
          ...(extra.transports !== undefined ? { transports: extra.transports } : {}),
        },
        { batchSize: 50, leaseMs: 60_000, pollMs: 20, reapEveryMs: 10_000 },
      );
      closer.defer(() => worker.stop(2_000));
      return worker;
    },
    admin: async (url) => {
      const res = await app.inject({
        method: 'GET',
        url: `/admin/v1${url}`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode} ${res.body}`);
      return res.json<Record<string, unknown>>();
    },
  };
}

/** How many times each Message-ID reached these sinks, together. */
export function deliveriesPerMessage(...sinks: Sink[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const s of sinks) for (const r of s.received) counts.set(r.messageId ?? '?', (counts.get(r.messageId ?? '?') ?? 0) + 1);
  return counts;
}

/** The sink answers 421 to every MAIL FROM: the provider is down. */
export function takeDown(sink: Sink): void {
  sink.behaviour.mailFrom = () =>
    Object.assign(new Error('Service not available, closing transmission channel'), { responseCode: 421 });
}

export function bringUp(sink: Sink): void {
  sink.behaviour.mailFrom = undefined;
}
