import type { Config } from '../config/env.js';
import { startMetricsServer } from '../http/metrics-server.js';
import { createRuntime, untilSignal } from './runtime.js';

/** How long sends under way get on SIGTERM before what is left goes back to the queue. */
const SHUTDOWN_GRACE_MS = 10_000;
/**
 * The stop itself may hang past the grace (a database that stopped answering, a lock held
 * elsewhere): after this much more the process exits anyway, as `mailroom serve` does. Whatever
 * it still held is not lost: the leases expire and another worker's reaper takes them back.
 */
const SHUTDOWN_DEADLINE_MS = SHUTDOWN_GRACE_MS + 5_000;

/**
 * `mailroom worker`: delivery only (mail, and outbound webhooks). Run as many as the database and relays bear. Its only HTTP
 * is the optional metrics listener (MAILROOM_METRICS_PORT): /metrics with this process's
 * delivery counters, and /v1/health.
 */
export async function runWorker(config: Config, out: (line: string) => void): Promise<void> {
  const runtime = await createRuntime(config);
  const listener =
    config.metricsPort === undefined
      ? undefined
      : await startMetricsServer({
          config,
          port: config.metricsPort,
          store: runtime.store,
          metrics: runtime.metrics,
          clock: runtime.clock,
        }).catch(async (err: unknown) => {
          await runtime.close();
          throw err;
        });
  const worker = runtime.createWorker();
  const dispatcher = runtime.createDispatcher();
  worker.start();
  dispatcher.start();
  // Listening for the signal before saying we run: a supervisor that reads the line may stop us at once.
  const signalled = untilSignal();
  out(
    `mailroom worker running (database: ${runtime.store.dialect}, ` +
      `metrics: ${listener === undefined ? 'off' : `http://${config.host}:${listener.port}/metrics`})`,
  );
  const signal = await signalled;
  runtime.logger.info({ signal }, 'worker shutting down');
  const timer = setTimeout(() => {
    runtime.logger.error('shutdown took too long; exiting');
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS);
  timer.unref();
  await Promise.all([worker.stop(SHUTDOWN_GRACE_MS), dispatcher.stop(SHUTDOWN_GRACE_MS)]);
  // Scrapes keep working until the sends are settled; the store closes after the listener.
  await listener?.close();
  await runtime.close();
}
