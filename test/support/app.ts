import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/env.js';
import type { App } from '../../src/http/app-types.js';
import type { Dialect } from '../../src/storage/dialect.js';
import { freshStore, type TestStore } from './stores.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    MAILROOM_BASE_URL: 'http://mailroom.test',
    MAILROOM_LOG_LEVEL: 'silent',
    MAILROOM_ADMIN_TOKEN: ADMIN_TOKEN,
    MAILROOM_DATA_DIR: '/tmp/mailroom-test-data',
    ...env,
  });
}

export interface TestApp extends TestStore {
  app: App;
  config: Config;
}

/** The real app over a fresh database of the dialect; `cleanup` closes both. */
export async function freshApp(dialect: Dialect, env: Record<string, string> = {}): Promise<TestApp> {
  const ts = await freshStore(dialect);
  const config = testConfig(env);
  const app = await buildApp({ config, store: ts.store, clock: ts.clock });
  await app.ready();
  return {
    ...ts,
    app,
    config,
    cleanup: async () => {
      await app.close();
      await ts.cleanup();
    },
  };
}
