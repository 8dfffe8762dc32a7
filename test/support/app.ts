import { afterEach, beforeEach } from 'vitest';
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

/**
 * A fresh app for every test of the enclosing block, closed after it; `assign` hands it to the
 * block's `t`. Nothing is built when `skip` (PostgreSQL unreachable on a user's machine).
 */
export function freshAppEach(dialect: Dialect, skip: boolean, assign: (t: TestApp) => void, env: Record<string, string> = {}): void {
  let current: TestApp | undefined;
  beforeEach(async () => {
    if (skip) return;
    current = await freshApp(dialect, env);
    assign(current);
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
}
