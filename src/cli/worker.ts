import type { Config } from '../config/env.js';
import { createRuntime, untilSignal } from './runtime.js';

const SHUTDOWN_GRACE_MS = 10_000;

/** `mailroom worker`: delivery only, no HTTP. Run as many as the database and relays bear. */
export async function runWorker(config: Config, out: (line: string) => void): Promise<void> {
  const runtime = await createRuntime(config);
  const worker = runtime.createWorker();
  worker.start();
  out(`mailroom worker running (database: ${runtime.store.dialect})`);
  const signal = await untilSignal();
  runtime.logger.info({ signal }, 'worker shutting down');
  await worker.stop(SHUTDOWN_GRACE_MS);
  await runtime.close();
}
