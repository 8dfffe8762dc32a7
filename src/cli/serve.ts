import { buildApp } from '../app.js';
import { applyConfig } from '../admin/apply.js';
import { demoInstructions, ensureDemo } from '../bootstrap/demo.js';
import type { Config } from '../config/env.js';
import { readConfigFile } from '../config/file.js';
import { systemClock } from '../domain/clock.js';
import { openStore } from '../storage/store.js';

/** How long a stop may take before the process gives up on in-flight work and exits. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * `mailroom serve`: config → store (migrated) → declarative config or first-run demo → app →
 * listen. SIGTERM/SIGINT close the listener (in-flight requests finish), then the store.
 */
export async function serve(config: Config, out: (line: string) => void): Promise<void> {
  const store = await openStore(config.databaseUrl, { clock: systemClock });
  if (config.configFile !== undefined) {
    const report = await applyConfig(store, readConfigFile(config.configFile));
    out(`Applied ${config.configFile}: ${report.changes.length === 0 ? 'no changes' : `${report.changes.length} change(s)`}`);
    for (const k of report.generatedKeys) out(`  generated ${k.type} key for ${k.org_id}: ${k.key}`);
  }
  const demo = await ensureDemo(store, config);

  const app = await buildApp({ config, store, clock: systemClock });
  await app.listen({ port: config.port, host: config.host });
  out(`mailroom listening on ${config.baseUrl} (database: ${store.dialect})`);
  if (demo !== undefined) out(demoInstructions(demo, config));

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      app.log.info({ signal }, 'shutting down');
      const timer = setTimeout(() => {
        app.log.error('shutdown took too long; exiting');
        process.exit(1);
      }, SHUTDOWN_GRACE_MS);
      timer.unref();
      app.close()
        .then(() => store.close())
        .finally(resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
