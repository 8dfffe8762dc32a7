import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach } from 'vitest';
import type { Clock, ManualClock } from '../../src/domain/clock.js';
import { createMetrics, type Metrics } from '../../src/observability/metrics.js';
import type { Dialect } from '../../src/storage/dialect.js';
import type { Store } from '../../src/storage/store.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { createWebhookHttp } from '../../src/webhooks/http-post.js';
import type { WebhookSettings } from '../../src/webhooks/types.js';
import { Closer } from '../support/cleanup.js';
import { databaseOf } from '../support/db.js';
import { seedOrg } from '../support/seed.js';
import { freshStore, type TestDatabase, type TestStore } from '../support/stores.js';

/**
 * Outbound webhooks' tests: a loopback receiver that records every request and verifies it with
 * the `standardwebhooks` package (the issue asks that every request a test receives be checked
 * that way), and raw endpoint rows for tests that run before or beside the endpoints' repo.
 */

/** What the receiver answers: a status, `hang` (never answers), or `down` (refuses connections). */
export type Answer = 200 | 204 | 400 | 410 | 500 | 503 | 'hang';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** `webhook-id` */
  webhookId: string;
  /** The secrets (of `secrets`) whose `Webhook.verify` accepted the request; empty: forged. */
  verifiedWith: string[];
  /** The parsed body as `Webhook.verify` returned it (null when no secret verified it). */
  payload: unknown;
  /** What the receiver answered (`hang`: nothing). */
  answered: Answer;
}

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly received: ReceivedRequest[];
  /** Secrets the requests are verified with; a rotation test sets both. */
  secrets: string[];
  /** The next answers, in order; `fallback` once they are used up. */
  script(answers: readonly Answer[]): void;
  fallback: Answer;
  /** Each answer waits this long (a slower receiver). */
  delayMs: number;
  /** Stops listening (connections are refused) until `up()`, on the same port. */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Requests carrying this `webhook-id`. */
  withId(id: string): ReceivedRequest[];
  close(): Promise<void>;
}

function verify(secrets: readonly string[], body: string, headers: Record<string, string>): { verifiedWith: string[]; payload: unknown } {
  const verifiedWith: string[] = [];
  let payload: unknown = null;
  for (const secret of secrets) {
    try {
      payload = new Webhook(secret).verify(body, headers);
      verifiedWith.push(secret);
    } catch {
      // Not signed with this one.
    }
  }
  return { verifiedWith, payload };
}

/** A receiver on 127.0.0.1 (a free port), closed by `closer`. */
export async function startReceiver(secrets: string[], closer?: Closer): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const queue: Answer[] = [];
  const hanging = new Set<http.ServerResponse>();
  const handler: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const answered = queue.shift() ?? receiver.fallback;
      received.push({
        method: req.method ?? '', path: req.url ?? '', headers, body, webhookId: headers['webhook-id'] ?? '',
        ...verify(receiver.secrets, body, headers), answered,
      });
      if (answered === 'hang') {
        hanging.add(res);
        return;
      }
      const answer = () => res.writeHead(answered, { 'content-type': 'text/plain' }).end(`answer ${answered}`);
      if (receiver.delayMs > 0) setTimeout(answer, receiver.delayMs);
      else answer();
    });
  };
  let server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let listening = true;
  const stop = async () => {
    if (!listening) return;
    listening = false;
    for (const res of hanging) res.destroy();
    hanging.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    secrets,
    fallback: 200,
    delayMs: 0,
    script: (answers) => { queue.push(...answers); },
    down: stop,
    up: async () => {
      if (listening) return;
      server = http.createServer(handler);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      listening = true;
    },
    withId: (id) => received.filter((r) => r.webhookId === id),
    close: stop,
  };
  closer?.defer(() => receiver.close());
  return receiver;
}

/** A valid secret for tests (`whsec_` + base64 of 32 bytes). */
export function testSecret(fill: number): string {
  return `whsec_${Buffer.alloc(32, fill).toString('base64')}`;
}

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
  await databaseOf(store).insertInto('webhook_endpoints').values({
    org_id: e.org_id ?? 'acme', id: e.id, url: e.url, description: null, events, enabled: e.enabled === false ? 0 : 1,
    disabled_reason: null, secret: e.secret, previous_secret: e.previous_secret ?? null,
    previous_secret_expires_at: e.previous_secret_expires_at ?? null, failing_since: null, created_at: now, updated_at: now,
  }).execute();
}

/** An endpoint row as stored now (enabled, disabled_reason, failing_since). */
export async function endpointRow(store: Store, id: string, orgId = 'acme') {
  return databaseOf(store).selectFrom('webhook_endpoints').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirstOrThrow();
}

/** Sets an endpoint's columns behind the API's back (re-enabling it, say). */
export async function setEndpointFields(store: Store, id: string, fields: { enabled?: number; disabled_reason?: string | null; failing_since?: number | null }, orgId = 'acme'): Promise<void> {
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
    retryScheduleSeconds: [0, 1, 1], attemptTimeoutMs: 1000, secretGraceMs: 86_400_000, disableAfterMs: 5 * 86_400_000,
    endpointConcurrency: 4, maxInFlight: 64, urlPolicy: { production: false, allowPrivate: false }, ...overrides,
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
export function testDispatcher(store: Store, clock: Clock, closer: Closer, overrides: Partial<WebhookSettings> = {}): TestDispatcher {
  const settings = testSettings(overrides);
  const http = createWebhookHttp({ policy: settings.urlPolicy, timeoutMs: settings.attemptTimeoutMs });
  const metrics = createMetrics(undefined, () => store.webhookDeliveries.stats(clock.now()));
  const warnings: string[] = [];
  const log = (obj: object, msg: string) => { warnings.push(`${msg} ${JSON.stringify(obj)}`); };
  const dispatcher = new WebhookDispatcher({
    store, clock, http, settings, metrics, logger: { info: () => undefined, warn: log, error: log }, random: () => 0, pollMs: 20,
  });
  closer.defer(async () => {
    await dispatcher.stop(2000);
    await http.close();
  });
  return {
    dispatcher, metrics, settings, warnings,
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
  /** PostgreSQL is the dialect and does not answer: the tests skip (`it.skipIf(t.skip)`). */
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
export function useWebhookStore(dialect: Dialect, pgUp: boolean): WebhookStore {
  const skip = dialect === 'postgres' && !pgUp;
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
    get closer() { return closer; },
    get store() { return opened().store; },
    get clock() { return opened().clock; },
    get database() { return opened().database; },
  };
}
