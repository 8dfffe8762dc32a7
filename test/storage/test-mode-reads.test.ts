import { expect, it } from 'vitest';
import { sha256 } from '../../src/domain/ids.js';
import { retentionDaysOf } from '../../src/domain/retention.js';
import { DAY_MS } from '../../src/storage/overview.js';
import { databaseOf } from '../support/db.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';
import { seedOrg } from '../support/seed.js';
import { insertModeMessage } from '../support/test-mode.js';

/**
 * The storage side of test mode's reads (issue 27 §1): keys and messages carry their mode, the
 * claim hands it to the worker, history and the overview never mix live and test, and the purge
 * of test messages leaves live ones.
 */
describeDialects('test mode in storage on %s', (dialect, skip) => {
  const t = freshStoreEach(dialect, skip, (s) => seedOrg(s.store));

  it.skipIf(skip)('a test key is pk_test_/sk_test_, its hint keeps test_, and its mode is stored', async () => {
    const pub = await t.store.keys.insert('acme', 'public', 1, undefined, 'test');
    const priv = await t.store.keys.insert('acme', 'private', 1, undefined, 'test');
    const live = await t.store.keys.insert('acme', 'private', 1);
    expect(pub.value).toMatch(/^pk_test_[A-Za-z0-9_-]{24}$/);
    expect(priv.value).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
    expect(live.value).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
    expect(priv.key.hint).toBe(`sk_test_…${priv.value.slice(-4)}`);
    expect((await t.store.keys.findByValue(priv.value))?.mode).toBe('test');
    expect((await t.store.keys.findByValue(pub.value))?.mode).toBe('test');
    expect((await t.store.keys.findByValue(live.value))?.mode).toBe('live');
    // A pinned live key named like a test key stays live, with a live-style hint (seed.ts's keys).
    const pinned = await t.store.keys.insert('acme', 'private', 1, 'sk_test_pinned_0002');
    expect(pinned.key).toMatchObject({ mode: 'live', hint: 'sk_…0002' });
    expect((await t.store.keys.list('acme')).filter((k) => k.mode === 'test')).toHaveLength(2);
    expect((await databaseOf(t.store).selectFrom('api_keys').select('key_hash').execute()).map((r) => r.key_hash)).toContain(
      sha256(priv.value),
    );
  });

  it.skipIf(skip)('messages keep mode and simulated; the claim returns them', async () => {
    const test = await insertModeMessage(t.store, undefined, { mode: 'test', createdAt: 1000 });
    const sim = await insertModeMessage(t.store, undefined, { mode: 'live', simulated: true, createdAt: 1001 });
    const live = await insertModeMessage(t.store, undefined, { mode: 'live', createdAt: 1002 });
    expect(await t.store.messages.get('acme', test)).toMatchObject({ mode: 'test', simulated: false });
    expect(await t.store.messages.get('acme', sim)).toMatchObject({ mode: 'live', simulated: true });
    const claimed = await t.store.transaction((tx) => tx.queue.claim(5000, 10, 60_000));
    expect(new Map(claimed.map((c) => [c.id, [c.mode, c.simulated]]))).toEqual(
      new Map([
        [test, ['test', false]],
        [sim, ['live', true]],
        [live, ['live', false]],
      ]),
    );
  });

  it.skipIf(skip)('history lists live by default and test on request, each with its mode', async () => {
    const live = await insertModeMessage(t.store, undefined, { mode: 'live', createdAt: 1000 });
    const sim = await insertModeMessage(t.store, undefined, { mode: 'live', simulated: true, createdAt: 1001 });
    const test1 = await insertModeMessage(t.store, undefined, { mode: 'test', createdAt: 1002 });
    const test2 = await insertModeMessage(t.store, undefined, { mode: 'test', createdAt: 1003, to: ['bob@example.com'] });
    const ids = async (f: Parameters<typeof t.store.messages.history>[1]) =>
      (await t.store.messages.history('acme', f, 10)).map((r) => [r.id, r.mode, r.simulated]);
    expect(await ids({})).toEqual([
      [sim, 'live', true],
      [live, 'live', false],
    ]);
    expect(await ids({ mode: 'live', statuses: ['queued', 'sent'] })).toEqual([
      [sim, 'live', true],
      [live, 'live', false],
    ]);
    expect(await ids({ mode: 'test' })).toEqual([
      [test2, 'test', false],
      [test1, 'test', false],
    ]);
    expect(await ids({ mode: 'test', recipient: 'bob@example.com' })).toEqual([[test2, 'test', false]]);
    expect(await ids({ mode: 'test', before: { created_at: 1003, id: test2 } })).toEqual([[test1, 'test', false]]);
  });

  it.skipIf(skip)('overview counts, queue and holds of one mode never include the other', async () => {
    const day = 20_000 * DAY_MS;
    await insertModeMessage(t.store, undefined, { mode: 'live', createdAt: day + 1 });
    await insertModeMessage(t.store, undefined, { mode: 'live', createdAt: day + 2, status: 'held' });
    await insertModeMessage(t.store, undefined, { mode: 'test', createdAt: day + 3 });
    await insertModeMessage(t.store, undefined, { mode: 'test', createdAt: day + 4 });
    await insertModeMessage(t.store, undefined, { mode: 'test', createdAt: day + DAY_MS + 5 });
    const counts = async (mode?: 'live' | 'test') =>
      (await t.store.overview.dailyCounts('acme', day, day + 2 * DAY_MS, mode))
        .map((c) => `${c.day - 20_000} ${c.status} ${c.count}`)
        .sort();
    expect(await counts()).toEqual(['0 held 1', '0 queued 3', '1 queued 1']);
    expect(await counts('live')).toEqual(['0 held 1', '0 queued 1']);
    expect(await counts('test')).toEqual(['0 queued 2', '1 queued 1']);
    const now = day + 3 * DAY_MS;
    expect(await t.store.overview.queue('acme', now)).toEqual({ depth: 4, oldestDueAt: day + 1 });
    expect(await t.store.overview.queue('acme', now, 'live')).toEqual({ depth: 1, oldestDueAt: day + 1 });
    expect(await t.store.overview.queue('acme', now, 'test')).toEqual({ depth: 3, oldestDueAt: day + 3 });
    expect(await t.store.overview.held('acme')).toBe(1);
    expect(await t.store.overview.held('acme', 'live')).toBe(1);
    expect(await t.store.overview.held('acme', 'test')).toBe(0);
  });

  it.skipIf(skip)("the test purge takes test messages past their retention only, with their inbox row's blob key", async () => {
    const config = { retentionDays: 30, testRetentionDays: 7 };
    expect(retentionDaysOf('test', config)).toBe(7);
    expect(retentionDaysOf('live', config)).toBe(30);
    expect(retentionDaysOf('test', { retentionDays: 3, testRetentionDays: 7 })).toBe(3);
    const oldLive = await insertModeMessage(t.store, undefined, { mode: 'live', createdAt: 1000 });
    const oldTest = await insertModeMessage(t.store, undefined, { mode: 'test', createdAt: 1001 });
    const newTest = await insertModeMessage(t.store, undefined, { mode: 'test', createdAt: 9000 });
    await databaseOf(t.store).updateTable('messages').set({ status: 'sent' }).execute();
    await t.store.testInbox.insert({
      message_id: oldTest,
      org_id: 'acme',
      template_id: 'contact',
      subject: 'Hi',
      from_addr: 'noreply@acme.test',
      recipients: [],
      blob_key: `acme/eml_${oldTest}`,
      size: 10,
      sha256: 'ab',
      created_at: 1001,
      captured_at: 1100,
    });
    const purged = await t.store.transaction((tx) => tx.messages.purgeOlderThan(5000, 100, 'test'));
    expect(purged).toEqual([{ id: oldTest, attachments: null, inbox_blob: `acme/eml_${oldTest}` }]);
    expect(await t.store.testInbox.get('acme', oldTest)).toBeUndefined();
    expect(await t.store.messages.get('acme', oldLive)).toBeDefined();
    expect(await t.store.messages.get('acme', newTest)).toBeDefined();
    // Without a mode, every message past the cutoff goes (live retention), blob keys null without a capture.
    const all = await t.store.transaction((tx) => tx.messages.purgeOlderThan(10_000, 100));
    expect(all.map((m) => [m.id, m.inbox_blob]).sort()).toEqual(
      [
        [oldLive, null],
        [newTest, null],
      ].sort(),
    );
  });
});
