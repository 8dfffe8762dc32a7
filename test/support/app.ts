import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { buildApp } from '../../src/app.js';
import { buildServices, type ServiceDeps } from '../../src/cli/runtime.js';
import { loadConfig, type Config } from '../../src/config/env.js';
import type { App } from '../../src/http/app-types.js';
import type { Dialect } from '../../src/storage/dialect.js';
import { freshStore, type TestStore } from './stores.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    MAILROOM_BASE_URL: 'http://mailroom.test',
    MAILROOM_LOG_LEVEL: 'silent',
    MAILROOM_ADMIN_TOKEN: ADMIN_TOKEN,
    MAILROOM_DATA_DIR: '/tmp/mailroom-test-data',
    ...env,
  });
}

/**
 * The app over services built as `mailroom serve` builds them (buildServices), with whatever a
 * test replaces in `deps`; closing the app closes what was opened for it (a Redis connection
 * from MAILROOM_REDIS_URL), never the store.
 */
export async function buildTestApp(config: Config, deps: ServiceDeps & { onAccepted?: () => void }): Promise<App> {
  const services = buildServices(config, deps);
  const { store, clock, metrics, protection, blobs, notifier } = services;
  try {
    const app = await buildApp({
      config,
      store,
      clock,
      metrics,
      protection,
      blobs,
      notifier,
      ...(deps.onAccepted === undefined ? {} : { onAccepted: deps.onAccepted }),
    });
    app.addHook('onClose', () => services.close());
    return app;
  } catch (err) {
    await services.close();
    throw err;
  }
}

export interface TestApp extends TestStore {
  app: App;
  config: Config;
}

/** The real app over a fresh database of the dialect; `cleanup` closes both. */
export async function freshApp(dialect: Dialect, env: Record<string, string> = {}): Promise<TestApp> {
  const ts = await freshStore(dialect);
  const config = testConfig(env);
  const app = await buildTestApp(config, { store: ts.store, clock: ts.clock });
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

/** Hands the app to the block's `t`, and may seed it: what it returns (a promise) is awaited before the tests that use it. */
export type AssignApp = (t: TestApp) => unknown;

/**
 * A fresh app for every test of the enclosing block, closed after it; `assign` hands it to the
 * block's `t`. Nothing is built when `skip` (PostgreSQL unreachable on a user's machine).
 */
export function freshAppEach(dialect: Dialect, skip: boolean, assign: AssignApp, env: Record<string, string> = {}): void {
  let current: TestApp | undefined;
  beforeEach(async () => {
    if (skip) return;
    current = await freshApp(dialect, env);
    await assign(current);
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
}

/** As freshAppEach, but one app for all the block's tests: built before the first, closed after the last. */
export function freshAppAll(dialect: Dialect, skip: boolean, assign: AssignApp, env: Record<string, string> = {}): void {
  let current: TestApp | undefined;
  beforeAll(async () => {
    if (skip) return;
    current = await freshApp(dialect, env);
    await assign(current);
  });
  afterAll(async () => {
    await current?.cleanup();
    current = undefined;
  });
}
