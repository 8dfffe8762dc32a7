import { expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { admin, createOrg } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { insertMessage } from '../support/db.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Issue 29, outages made visible: a message deferred by its provider is `retrying` in the admin
 * list (a filter and a flag) and on the overview (how many, the oldest and its last error),
 * where before it listed as `queued` and the overview said "oldest due —".
 */
interface Item {
  message_id: string;
  status: string;
  retrying?: true;
}

describeDialects('retrying messages on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  /** Three queued messages; the first two are claimed and deferred by "their provider", as the worker does. */
  const seed = async () => {
    await createOrg(t);
    await admin(t, 'PUT', '/organizations/acme/services/relay', { provider: 'outbox', default: true });
    const now = t.clock.now();
    await insertMessage(t.store, 'acme', 'msg_a_deferred', 'queued', now - 3000, true, 'relay');
    await insertMessage(t.store, 'acme', 'msg_b_deferred', 'queued', now - 2000, true, 'relay');
    await insertMessage(t.store, 'acme', 'msg_c_fresh', 'queued', now - 1000, true, 'relay');
    await insertMessage(t.store, 'acme', 'msg_d_sent', 'sent', now - 500, true, 'relay');
    const claimed = (await t.store.queue.claim(now, 10, 60_000)).filter((m) => m.id !== 'msg_c_fresh');
    expect(claimed.map((m) => m.id).sort()).toEqual(['msg_a_deferred', 'msg_b_deferred']);
    for (const m of claimed)
      await t.store.queue.markRetry(m.id, m.lease_until, now, now + 600_000, `421 4.7.0 ${m.id}: try again later`);
    // The fresh one was claimed too: give it back untouched, as a stopping worker does.
    const fresh = (await t.store.messages.get('acme', 'msg_c_fresh'))?.lease_until;
    if (fresh != null) await t.store.queue.release('msg_c_fresh', fresh, now, 'worker_stopped');
  };

  it.skipIf(skip)('status=retrying lists the deferred messages only, each flagged; the full list flags them too', async () => {
    await seed();
    const retrying = await admin(t, 'GET', '/organizations/acme/messages?status=retrying');
    expect(retrying.statusCode, retrying.body).toBe(200);
    const items = retrying.json<{ items: Item[] }>().items;
    expect(items.map((i) => [i.message_id, i.status, i.retrying])).toEqual([
      ['msg_b_deferred', 'queued', true],
      ['msg_a_deferred', 'queued', true],
    ]);
    const all = (await admin(t, 'GET', '/organizations/acme/messages')).json<{ items: Item[] }>().items;
    expect(all.map((i) => [i.message_id, i.retrying ?? false])).toEqual([
      ['msg_d_sent', false],
      ['msg_c_fresh', false],
      ['msg_b_deferred', true],
      ['msg_a_deferred', true],
    ]);
    const mixed = (await admin(t, 'GET', '/organizations/acme/messages?status=retrying,sent')).json<{ items: Item[] }>().items;
    expect(mixed.map((i) => i.message_id)).toEqual(['msg_d_sent', 'msg_b_deferred', 'msg_a_deferred']);
    const bad = expectError(await admin(t, 'GET', '/organizations/acme/messages?status=stuck'), 400, 'invalid_body');
    expect(bad.message).toContain('retrying');
  });

  it.skipIf(skip)('a sent message is no longer retrying', async () => {
    await seed();
    const claimed = await t.store.queue.claim(t.clock.now() + 700_000, 10, 60_000);
    const a = claimed.find((m) => m.id === 'msg_a_deferred');
    expect(a).toBeDefined();
    if (a !== undefined)
      await t.store.queue.markSentMany([{ id: a.id, lease: a.lease_until, detail: {} }], t.clock.now() + 700_000);
    const items = (await admin(t, 'GET', '/organizations/acme/messages?status=retrying')).json<{ items: Item[] }>().items;
    expect(items.map((i) => i.message_id)).not.toContain('msg_a_deferred');
  });

  it.skipIf(skip)('the overview names how many retry, the oldest, and its last error in full', async () => {
    await seed();
    const res = await admin(t, 'GET', '/organizations/acme/overview');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ retrying: unknown; queue: { depth: number } }>();
    expect(body.queue.depth).toBe(3);
    expect(body.retrying).toEqual({
      count: 2,
      oldest: {
        message_id: 'msg_a_deferred',
        service_id: 'relay',
        created_at: new Date(t.clock.now() - 3000).toISOString(),
        attempts: 1,
        next_attempt_at: new Date(t.clock.now() + 600_000).toISOString(),
        last_error: '421 4.7.0 msg_a_deferred: try again later',
      },
    });
    const test = (await admin(t, 'GET', '/organizations/acme/overview?mode=test')).json<{ retrying: unknown }>();
    expect(test.retrying).toEqual({ count: 0, oldest: null });
  });
});
