import { beforeEach, expect, it } from 'vitest';
import { buildTestApp, testConfig, type TestApp } from '../support/app.js';
import { admin } from '../support/admin.js';
import { closerPerTest } from '../support/cleanup.js';
import { describeDialects } from '../support/dialects.js';
import { bearer, expectError } from '../support/http.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { freshStore } from '../support/stores.js';
import { insertModeMessage, tokenOf } from '../support/test-mode.js';

/**
 * Reads per mode (issue 27 §2, §4, decision D1): history lists live or test messages, never
 * both (live by default; a test key reads test messages only, `mode=live` is 403 for it); a
 * test key reads no live message; every read says the mode, and a simulated message says so on
 * itself and on each of its events; test messages keep their shorter retention on every read.
 */

interface Item {
  message_id: string;
  mode: string;
  simulated?: boolean;
}
interface Page {
  items: Item[];
  next_cursor: string | null;
}
interface Message {
  message_id: string;
  mode: string;
  simulated?: boolean;
  events: Array<{ type: string; details?: Record<string, unknown> }>;
}

const DAY = 86_400_000;

describeDialects('reads per mode on %s', (dialect, skip) => {
  const closer = closerPerTest();
  let t: TestApp;
  let testKey: string;
  let testPublicKey: string;
  let live: string;
  let test: string;
  let sim: string;

  beforeEach(async () => {
    if (skip) return;
    const ts = await freshStore(dialect);
    closer.defer(() => ts.cleanup());
    const config = testConfig();
    const app = await buildTestApp(config, { store: ts.store, clock: ts.clock });
    closer.defer(() => app.close());
    await app.ready();
    t = { ...ts, app, config };
    await seedOrg(t.store);
    testKey = (await t.store.keys.insert('acme', 'private', t.clock.now(), undefined, 'test')).value;
    testPublicKey = (await t.store.keys.insert('acme', 'public', t.clock.now(), undefined, 'test')).value;
    live = await insertModeMessage(t.store, undefined, { to: ['ada@example.org'], createdAt: t.clock.now() });
    t.clock.advance(1);
    test = await insertModeMessage(t.store, undefined, { to: ['ada@example.org'], createdAt: t.clock.now(), mode: 'test' });
    t.clock.advance(1);
    sim = await insertModeMessage(t.store, undefined, {
      to: ['delivered@simulator.mailroom.test'],
      createdAt: t.clock.now(),
      simulated: true,
    });
  });

  const get = (url: string, headers: Record<string, string>) => t.app.inject({ method: 'GET', url, headers });
  const history = async (query: string, key: string): Promise<Page> => {
    const res = await get(`/v1/history${query}`, bearer(key));
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Page>();
  };
  const message = async (id: string, headers: Record<string, string>): Promise<Message> => {
    const res = await get(`/v1/messages/${id}`, headers);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Message>();
  };

  it.skipIf(skip)('history is live by default, test on request, never both; items say their mode', async () => {
    const byLive = await history('', PRIVATE_KEY);
    expect(byLive.items).toEqual([
      expect.objectContaining({ message_id: sim, mode: 'live', simulated: true }),
      expect.objectContaining({ message_id: live, mode: 'live' }),
    ]);
    expect(byLive.items[1]).not.toHaveProperty('simulated');
    expect((await history('?mode=live', PRIVATE_KEY)).items.map((i) => i.message_id)).toEqual([sim, live]);
    expect((await history('?mode=test', PRIVATE_KEY)).items).toEqual([
      expect.objectContaining({ message_id: test, mode: 'test' }),
    ]);
    expectError(await get('/v1/history?mode=both', bearer(PRIVATE_KEY)), 400, 'invalid_body');
  });

  it.skipIf(skip)('a test key lists test messages only: its default, and mode=live is forbidden', async () => {
    expect((await history('', testKey)).items.map((i) => i.message_id)).toEqual([test]);
    expect((await history('?mode=test', testKey)).items.map((i) => i.message_id)).toEqual([test]);
    const refused = expectError(await get('/v1/history?mode=live', bearer(testKey)), 403, 'forbidden');
    expect(refused.details).toEqual({ reason: 'test_key' });
  });

  it.skipIf(skip)('a test key reads no live message; a live key reads both', async () => {
    expect(await message(test, bearer(testKey))).toMatchObject({ message_id: test, mode: 'test' });
    expectError(await get(`/v1/messages/${live}`, bearer(testKey)), 404, 'message_not_found');
    expectError(await get(`/v1/messages/${sim}`, bearer(testKey)), 404, 'message_not_found');
    expect(await message(live, bearer(PRIVATE_KEY))).toMatchObject({ mode: 'live' });
    expect(await message(test, bearer(PRIVATE_KEY))).toMatchObject({ mode: 'test' });
    // A public test key with the live message's own status token: still not there for it.
    const pubTest = { 'x-mail-public-key': testPublicKey, 'x-mail-status-token': tokenOf(live) };
    expectError(await get(`/v1/messages/${live}`, pubTest), 404, 'message_not_found');
    const pubTestOwn = await message(test, { 'x-mail-public-key': testPublicKey, 'x-mail-status-token': tokenOf(test) });
    expect(pubTestOwn.mode).toBe('test');
  });

  it.skipIf(skip)('a simulated message says so, on itself and on every event, to private and public readers', async () => {
    const own = await message(sim, bearer(PRIVATE_KEY));
    expect(own.simulated).toBe(true);
    expect(own.events.length).toBeGreaterThan(0);
    expect(own.events.every((e) => e.details?.simulated === true)).toBe(true);
    const pub = await message(sim, { 'x-mail-public-key': PUBLIC_KEY, 'x-mail-status-token': tokenOf(sim) });
    expect(pub.events.every((e) => e.details?.simulated === true)).toBe(true);
    const plain = await message(live, bearer(PRIVATE_KEY));
    expect(plain).not.toHaveProperty('simulated');
    expect(plain.events.every((e) => e.details?.simulated === undefined)).toBe(true);
  });

  it.skipIf(skip)('test messages keep test retention on every read; live ones keep theirs', async () => {
    // The test message was created 1 ms ago: 7 days after it, it is still there; 1 ms more, gone.
    t.clock.advance(7 * DAY - 1);
    expect((await history('', testKey)).items.map((i) => i.message_id)).toEqual([test]);
    t.clock.advance(1);
    expect((await history('', testKey)).items).toEqual([]);
    expect((await history('?mode=test', PRIVATE_KEY)).items).toEqual([]);
    expectError(await get(`/v1/messages/${test}`, bearer(testKey)), 404, 'message_not_found');
    expectError(await get(`/v1/messages/${test}`, bearer(PRIVATE_KEY)), 404, 'message_not_found');
    expectError(await admin(t, 'GET', `/organizations/acme/messages/${test}`), 404, 'message_not_found');
    expect((await history('', PRIVATE_KEY)).items.map((i) => i.message_id)).toEqual([sim, live]);
    expect(await message(live, bearer(PRIVATE_KEY))).toMatchObject({ mode: 'live' });
  });

  it.skipIf(skip)("the admin API's message list takes the mode; its detail shows any", async () => {
    const list = async (query: string) => {
      const res = await admin(t, 'GET', `/organizations/acme/messages${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json<Page>().items.map((i) => `${i.message_id}:${i.mode}`);
    };
    expect(await list('')).toEqual([`${sim}:live`, `${live}:live`]);
    expect(await list('?mode=test')).toEqual([`${test}:test`]);
    const detail = await admin(t, 'GET', `/organizations/acme/messages/${test}`);
    expect(detail.json<Message>()).toMatchObject({ message_id: test, mode: 'test' });
  });
});
