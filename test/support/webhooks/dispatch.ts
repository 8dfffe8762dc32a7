import { afterEach, beforeEach } from 'vitest';
import type { Clock, ManualClock } from '../../../src/domain/clock.js';
import { createMetrics, type Metrics } from '../../../src/observability/metrics.js';
import type { Dialect } from '../../../src/storage/dialect.js';
import type { Store } from '../../../src/storage/store.js';
import { WebhookDispatcher } from '../../../src/webhooks/dispatcher.js';
import { createWebhookHttp } from '../../../src/webhooks/http-post.js';
import type { WebhookSettings } from '../../../src/webhooks/types.js';
import { Closer } from '../cleanup.js';
import { databaseOf } from '../db.js';
import { seedOrg } from '../seed.js';
import { freshStore, type TestDatabase, type TestStore } from '../stores.js';

/**
 * Outbound webhooks' tests beside the receiver (./receiver.ts): raw endpoint rows for tests that
 * run before or beside the endpoints' repo, dispatchers in the test's process, and a fresh store
 * per test with `acme` seeded.
 */

export interface EndpointRow {
  org_id?: string;
  id: string;
  url: string;
  /** `*` or the event types (stored comma-wrapped). */
  events?: '*' | readonly string[];
  secret: string;
  enabled?: boolean;
  previous_secret?: string | null;
  previous_secret_expires_at?: number | null;
}

/** An endpoint row as stored (the fan-out reads these), written straight to the database. */
export async function insertEndpoint(store: Store, e: EndpointRow, now: number): Promise<void> {
  const events = e.events === undefined || e.events === '*' ? '*' : `,${e.events.join(',')},`;
  await databaseOf(store)
    .insertInto('webhook_endpoints')
    .values({
      org_id: e.org_id ?? 'acme',
      id: e.id,
      url: e.url,
      description: null,
      events,
      enabled: e.enabled === false ? 0 : 1,
      disabled_reason: null,
      secret: e.secret,
      previous_secret: e.previous_secret ?? null,
      previous_secret_expires_at: e.previous_secret_expires_at ?? null,
      failing_since: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

/** An endpoint row as stored now (enabled, disabled_reason, failing_since). */
export async function endpointRow(store: Store, id: string, orgId = 'acme') {
  return databaseOf(store)
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

/** Sets an endpoint's columns behind the API's back (re-enabling it, say). */
export async function setEndpointFields(
  store: Store,
  id: string,
  fields: { enabled?: number; disabled_reason?: string | null; failing_since?: number | null },
  orgId = 'acme',
): Promise<void> {
  await databaseOf(store).updateTable('webhook_endpoints').set(fields).where('org_id', '=', orgId).where('id', '=', id).execute();
}

/** Every delivery row, oldest first. */
export async function deliveryRows(store: Store) {
  return databaseOf(store).selectFrom('webhook_deliveries').selectAll().orderBy('id').execute();
}

// --- dispatchers in the test's process ------------------------------------------------------

/** Settings for tests: "0,1,1" (three attempts a second apart), a 1 s timeout, loopback allowed. */
export function testSettings(overrides: Partial<WebhookSettings> = {}): WebhookSettings {
  return {
    retryScheduleSeconds: [0, 1, 1],
    attemptTimeoutMs: 1000,
    secretGraceMs: 86_400_000,
    disableAfterMs: 5 * 86_400_000,
    endpointConcurrency: 4,
    maxInFlight: 64,
    urlPolicy: { production: false, allowPrivate: false },
    ...overrides,
  };
}

export interface TestDispatcher {
  dispatcher: WebhookDispatcher;
  metrics: Metrics;
  settings: WebhookSettings;
  warnings: string[];
  /** Claims and sends until nothing is due at the clock's time, every attempt recorded. */
  pump(): Promise<void>;
}

/** A dispatcher over `store` (not started: `pump()` drives it, or `start()` runs its loop). */
export function testDispatcher(
  store: Store,
  clock: Clock,
  closer: Closer,
  overrides: Partial<WebhookSettings> = {},
): TestDispatcher {
  const settings = testSettings(overrides);
  const http = createWebhookHttp({ policy: settings.urlPolicy, timeoutMs: settings.attemptTimeoutMs });
  const metrics = createMetrics(undefined, () => store.webhookDeliveries.stats(clock.now()));
  const warnings: string[] = [];
  const log = (obj: object, msg: string) => {
    warnings.push(`${msg} ${JSON.stringify(obj)}`);
  };
  const dispatcher = new WebhookDispatcher({
    store,
    clock,
    http,
    settings,
    metrics,
    logger: { info: () => undefined, warn: log, error: log },
    random: () => 0,
    pollMs: 20,
  });
  closer.defer(async () => {
    await dispatcher.stop(2000);
    await http.close();
  });
  return {
    dispatcher,
    metrics,
    settings,
    warnings,
    pump: async () => {
      for (;;) {
        const started = await dispatcher.fill();
        await dispatcher.idle();
        if (started === 0) return;
      }
    },
  };
}

/** A wall-clock-aligned manual clock: receivers check `webhook-timestamp` against real time (5 min). */
export function nowClock(clock: ManualClock): ManualClock {
  clock.set(Date.now());
  return clock;
}

// --- a fresh store per test -----------------------------------------------------------------

export interface WebhookStore {
  /** The dialect's tests skip (PostgreSQL that does not answer): `it.skipIf(t.skip)`. */
  readonly skip: boolean;
  /** A new one per test, closed in afterEach (the store's cleanup first deferred). */
  readonly closer: Closer;
  readonly store: Store;
  /** The store's manual clock, set to the wall clock (`nowClock`). */
  readonly clock: ManualClock;
  readonly database: TestDatabase;
}

/**
 * Registers, in the calling `describe`, a beforeEach that opens a fresh store of the dialect,
 * sets its clock to now and seeds the `acme` org, and an afterEach that closes everything the
 * test deferred to `closer`. The getters read the current test's.
 */
export function useWebhookStore(dialect: Dialect, skip: boolean): WebhookStore {
  let closer = new Closer();
  let current: TestStore | undefined;
  const opened = (): TestStore => {
    if (current === undefined) throw new Error('useWebhookStore: no store outside a test (or the dialect is skipped)');
    return current;
  };
  beforeEach(async () => {
    closer = new Closer();
    current = undefined;
    if (skip) return;
    const t = await freshStore(dialect);
    closer.defer(() => t.cleanup());
    current = t;
    nowClock(t.clock);
    await seedOrg(t.store);
  });
  afterEach(async () => {
    await closer.closeAll();
  });
  return {
    skip,
    get closer() {
      return closer;
    },
    get store() {
      return opened().store;
    },
    get clock() {
      return opened().clock;
    },
    get database() {
      return opened().database;
    },
  };
}
