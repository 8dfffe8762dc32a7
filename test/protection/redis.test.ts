import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { InjectOptions } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/http/app-types.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { RedisLimiterStore } from '../../src/protection/store.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { buildTestApp, testConfig } from '../support/app.js';
import { CONTACT_TEMPLATE, seedOrg } from '../support/seed.js';
import { freshStore, type TestStore } from '../support/stores.js';
import { CONTACT_PARAMS } from '../support/send.js';
import { keysOf, orgsLike, PROTECTED_TEMPLATE, ORIGIN, pkOf, skOf } from '../support/orgs.js';
import { expectAccepted, expectError, expectLimited } from '../support/http.js';
import { snapshot } from '../support/stored.js';
import { REDIS_URL, redisAvailable } from '../support/redis.js';
import { startTurnstile, type FakeTurnstile } from '../support/turnstile.js';
import { describeDialects } from '../support/dialects.js';

const redisUp = await redisAvailable();

/**
 * Limits that hold across processes through Redis, and what happens when Redis is gone. Each
 * "process" is an app built with buildTestApp over its own store connection and its own Redis
 * connection; they share the database, the Redis server and a key prefix.
 */

const org = orgsLike((id) => ({
  plan: 'pro',
  credits: 10_000,
  captcha: { site_key: 'site', secret_key: 'secret-acme' },
  keys: keysOf(id, 1, 2),
  templates: [CONTACT_TEMPLATE, PROTECTED_TEMPLATE],
}));

const body = (extra: Record<string, unknown> = {}) => ({ template_id: 'contact', template_params: CONTACT_PARAMS, ...extra });
const pub = (key: string) => ({ 'x-mail-public-key': key, origin: ORIGIN });
const priv = (key: string) => ({ authorization: `Bearer ${key}` });
const post = (
  app: App,
  headers: Record<string, string>,
  payload: Record<string, unknown> = body(),
  extra: Partial<InjectOptions> = {},
) => app.inject({ method: 'POST', url: '/v1/send', payload, headers, ...extra });

function newRedis(): Redis {
  const r = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  r.on('error', () => undefined);
  return r;
}

describe.skipIf(!redisUp)('RedisLimiterStore', () => {
  let redis: Redis;
  let store: RedisLimiterStore;
  const prefix = `mailroom-test:${randomBytes(6).toString('hex')}:`;
  beforeAll(() => {
    redis = newRedis();
    store = new RedisLimiterStore(redis, prefix);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('consumes all or nothing, atomically, with TTLs', async () => {
    const a = { key: 'a', limit: 2, ttlMs: 90_000 };
    const b = { key: 'b', limit: 1, ttlMs: 5000 };
    const n = { key: 'n', limit: null, ttlMs: 5000 };
    expect(await store.consume([a, b, n])).toBe(-1);
    expect(await store.consume([a, b, n])).toBe(1);
    expect(await redis.get(`${prefix}a`)).toBe('1');
    expect(await redis.get(`${prefix}n`)).toBe('1');
    const ttl = await redis.pttl(`${prefix}a`);
    expect(ttl).toBeGreaterThan(85_000);
    expect(ttl).toBeLessThanOrEqual(90_000);
    // A counter's key lives at least a minute, whatever its window (Redis's clock is not ours).
    const short = await redis.pttl(`${prefix}n`);
    expect(short).toBeGreaterThan(55_000);
    expect(short).toBeLessThanOrEqual(60_000);
    await store.release(['b', 'b', 'missing']);
    expect(await redis.get(`${prefix}b`)).toBe('0');
    // 40 concurrent consumers of a limit of 10: exactly 10 get through.
    const c = { key: 'c', limit: 10, ttlMs: 5000 };
    const results = await Promise.all(Array.from({ length: 40 }, () => store.consume([c])));
    expect(results.filter((r) => r === -1)).toHaveLength(10);
  });

  it('incrAndRead, setMax, claim and unclaim', async () => {
    await store.consume([{ key: 'r1', limit: null, ttlMs: 5000 }]);
    expect(await store.incrAndRead('w', 5000, ['r1', 'r2'])).toEqual({ count: 1, values: [1, 0] });
    expect(await store.incrAndRead('w', 5000, [])).toEqual({ count: 2, values: [] });
    await store.setMax('m', 1_800_000_000_000, 5000);
    await store.setMax('m', 5, 5000);
    expect(await store.incrAndRead('x', 5000, ['m'])).toEqual({ count: 1, values: [1_800_000_000_000] });
    expect(await store.claim('t', 5000)).toBe(true);
    expect(await store.claim('t', 5000)).toBe(false);
    await store.unclaim('t');
    expect(await store.claim('t', 5000)).toBe(true);
  });

  it('loads its scripts again after SCRIPT FLUSH', async () => {
    await redis.script('FLUSH');
    expect(await store.consume([{ key: 'after-flush', limit: 1, ttlMs: 5000 }])).toBe(-1);
  });
});

describeDialects('two API processes sharing one Redis on %s', (dialect, pgSkip) => {
  const skip = !redisUp || pgSkip;
  let ts: TestStore;
  let secondStore: Store;
  let a: App;
  let b: App;
  let turnstile: FakeTurnstile;
  const redises: Redis[] = [];
  const prefix = `mailroom-test:${randomBytes(6).toString('hex')}:`;

  beforeAll(async () => {
    if (skip) return;
    turnstile = await startTurnstile(['secret-acme']);
    ts = await freshStore(dialect);
    secondStore = await openStore(ts.database.url, { clock: ts.clock });
    const config = testConfig({ MAILROOM_TURNSTILE_VERIFY_URL: turnstile.url });
    const build = async (store: Store) => {
      const redis = newRedis();
      redises.push(redis);
      const app = await buildTestApp(config, { store, clock: ts.clock, redis, protection: { keyPrefix: prefix } });
      await app.ready();
      return app;
    };
    a = await build(ts.store);
    b = await build(secondStore);
    await seedOrg(ts.store, org('acme'));
    await seedOrg(ts.store, org('iplimited', { plan: 'business_50k' }, { ip_limit: { requests: 4, per_seconds: 60 } }));
  });
  afterAll(async () => {
    if (skip) return;
    await a.close();
    await b.close();
    const keys = await redises[0]!.keys(`${prefix}*`);
    if (keys.length > 0) await redises[0]!.del(...keys);
    await Promise.all(redises.map((r) => r.quit()));
    await secondStore.close();
    await ts.cleanup();
    await turnstile.close();
  });
  afterEach(() => {
    if (!skip) ts.clock.set((Math.floor(ts.clock.now() / 60_000) + 1) * 60_000);
  });

  it.skipIf(skip)('hold the Pro plan limit together: 20 per second for the organization, whichever process answers', async () => {
    // Two private keys, so that the organization's limit (not one key's) is what stops them.
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(i % 2 === 0 ? a : b, priv(skOf('acme', i % 4 < 2 ? 1 : 2)))),
    );
    for (const r of results) expectAccepted(r);
    const before = await snapshot(ts, 'acme');
    expectLimited(await post(a, priv(skOf('acme'))), 'plan');
    expectLimited(await post(b, priv(skOf('acme', 2))), 'plan');
    expect(await snapshot(ts, 'acme')).toEqual(before);
    ts.clock.advance(1000);
    expectAccepted(await post(b, priv(skOf('acme'))));
  });

  it.skipIf(skip)('hold the key limit and the per-IP limit together', async () => {
    for (let i = 0; i < 20; i++) expectAccepted(await post(i % 2 === 0 ? a : b, priv(skOf('acme'))));
    expectLimited(await post(b, priv(skOf('acme'))), 'key');
    for (let i = 0; i < 4; i++) expectAccepted(await post(i % 2 === 0 ? a : b, pub(pkOf('iplimited'))));
    expectLimited(await post(a, pub(pkOf('iplimited'))), 'ip');
    expectLimited(await post(b, pub(pkOf('iplimited'))), 'ip');
  });

  it.skipIf(skip)(
    'a CAPTCHA token used on one process is refused on the other, even when the verifier accepts the replay',
    async () => {
      turnstile.acceptReplays = true;
      try {
        const payload = body({ template_id: 'protected', turnstile_token: turnstile.issue('example.com') });
        expectAccepted(await post(a, pub(pkOf('acme')), payload));
        const err = expectError(await post(b, pub(pkOf('acme')), payload), 403, 'captcha_failed');
        expect(err.details?.reason).toBe('token_reused');
      } finally {
        turnstile.acceptReplays = false;
      }
    },
  );
});

describe.skipIf(!redisUp)('an app built from MAILROOM_REDIS_URL alone', () => {
  it('shares its limits through Redis with another one', async () => {
    const ts = await freshStore('sqlite');
    const second = await openStore(ts.database.url, { clock: ts.clock });
    // A time no other test uses: the default key prefix is shared by every run.
    ts.clock.set(Date.UTC(2031, 0, 1) + Math.floor(Math.random() * 1e9) * 1000);
    const config = testConfig({ MAILROOM_REDIS_URL: REDIS_URL });
    const a = await buildTestApp(config, { store: ts.store, clock: ts.clock });
    const b = await buildTestApp(config, { store: second, clock: ts.clock });
    try {
      await seedOrg(ts.store, org('solo', { plan: 'free' }));
      expectAccepted(await post(a, priv(skOf('solo'))));
      expectAccepted(await post(b, priv(skOf('solo'))));
      expectLimited(await post(a, priv(skOf('solo'))), 'key');
      // Redis expires the counter on its own clock: the 1-second window's key outlives any skew
      // between the processes' clocks (and this test's clock, which stands still), a minute at least.
      const window = Math.floor(ts.clock.now() / 1000);
      const probe = new Redis(REDIS_URL);
      try {
        const keys = await probe.keys(`mailroom:rl:key:*:1000:${window}`);
        expect(keys.length).toBeGreaterThan(0);
        for (const key of keys) expect(await probe.pttl(key)).toBeGreaterThan(55_000);
      } finally {
        probe.disconnect();
      }
    } finally {
      await a.close();
      await b.close();
      await second.close();
      await ts.cleanup();
    }
  });
});

describeDialects('Redis unreachable on %s', (dialect, skip) => {
  let ts: TestStore;
  let dead: App;
  let silent: App;
  let server: net.Server;
  const logs: Array<{ obj: object; msg: string }> = [];
  const metrics = createMetrics();
  const redises: Redis[] = [];

  beforeAll(async () => {
    if (skip) return;
    ts = await freshStore(dialect);
    const config = testConfig({ MAILROOM_RATE_LIMIT_TIMEOUT_MS: '200' });
    const logger = { warn: (obj: object, msg: string) => logs.push({ obj, msg }) };
    // Nothing listens on port 1: every command fails at once.
    const refused = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    refused.on('error', () => undefined);
    // A peer that accepts the connection and never answers: the deadline decides.
    server = net.createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as net.AddressInfo).port;
    const mute = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1, connectTimeout: 60_000 });
    mute.on('error', () => undefined);
    redises.push(refused, mute);
    dead = await buildTestApp(config, { store: ts.store, clock: ts.clock, metrics, redis: refused, protection: { logger } });
    silent = await buildTestApp(config, { store: ts.store, clock: ts.clock, metrics, redis: mute, protection: { logger } });
    await seedOrg(ts.store, org('acme'));
  });
  afterAll(async () => {
    if (skip) return;
    await dead.close();
    await silent.close();
    for (const r of redises) r.disconnect();
    server.close();
    await ts.cleanup();
  });

  const errorsCounted = async (): Promise<number> =>
    (await metrics.rateLimitBackendErrors.get()).values.reduce((n, v) => n + v.value, 0);

  it.skipIf(skip)(
    'public-key requests are refused with 503 (fail closed), private-key requests continue (fail open); both logged and counted',
    async () => {
      for (const app of [dead, silent]) {
        const counted = await errorsCounted();
        const loggedBefore = logs.length;
        const before = await snapshot(ts, 'acme');
        const res = await post(app, pub(pkOf('acme')));
        const err = expectError(res, 503, 'service_unavailable');
        expect(err.details?.reason).toBe('rate_limit_store_unavailable');
        expect(res.headers['retry-after']).toMatch(/^\d+$/);
        expect(await snapshot(ts, 'acme')).toEqual(before);
        expectAccepted(await post(app, priv(skOf('acme'))));
        expect(await errorsCounted()).toBeGreaterThanOrEqual(counted + 2);
        if (app === dead) expect(logs.length).toBeGreaterThan(loggedBefore);
      }
      expect(logs[0]?.msg).toBe('rate-limit store unavailable');
      expect(logs[0]?.obj).toMatchObject({ scope: 'flood', outcome: 'refused with 503 (fail closed)' });
      expect(logs.some((l) => (l.obj as { outcome?: string }).outcome === 'allowed (fail open)')).toBe(true);
      const labels = (await metrics.rateLimitBackendErrors.get()).values.map((v) => v.labels.scope);
      expect(labels).toEqual(expect.arrayContaining(['flood', 'plan']));
    },
  );
});
