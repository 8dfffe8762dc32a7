import { afterEach, beforeEach, expect, it } from 'vitest';
import { insertQueued } from '../support/delivery.js';
import { admin, createOrg } from '../support/admin.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { Closer } from '../support/cleanup.js';
import { databaseOf } from '../support/db.js';
import { expectError, expectInvalidField } from '../support/http.js';
import { seedOrg } from '../support/seed.js';
import { startReceiver, testSecret, type Receiver } from '../support/webhooks/receiver.js';
import { testDispatcher, type TestDispatcher } from '../support/webhooks/dispatch.js';
import { describeDialects } from '../support/dialects.js';

const HOOKS = '/organizations/acme/webhooks';
const A_SECRET = testSecret(1);
const B_SECRET = testSecret(2);

interface Delivery {
  id: string;
  endpoint_id: string;
  event_type: string;
  message_id: string | null;
  webhook_id: string;
  state: string;
  attempts: number;
  log: Array<{
    attempt: number;
    at: string;
    status: number | null;
    duration_ms: number;
    response_body: string | null;
    error: string | null;
  }>;
}
interface Page {
  items: Delivery[];
  next_cursor: string | null;
}

describeDialects('admin webhook delivery log, replay and test on %s', (dialect, skip) => {
  let t!: TestApp;
  let closer: Closer;
  let a: Receiver;
  let b: Receiver;
  let d: TestDispatcher;
  let messages: string[];
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });
  beforeEach(async () => {
    closer = new Closer();
    if (skip) return;
    // standardwebhooks refuses timestamps 5 minutes away from the real time.
    t.clock.set(Date.now());
    await seedOrg(t.store);
    a = await startReceiver([A_SECRET], closer);
    b = await startReceiver([B_SECRET], closer);
    for (const [id, url, secret] of [
      ['a', a.url, A_SECRET],
      ['b', b.url, B_SECRET],
    ] as const) {
      const res = await admin(t, 'POST', HOOKS, { id, url, secret });
      expect(res.statusCode, res.body).toBe(201);
    }
    d = testDispatcher(t.store, t.clock, closer);
    // Three messages, one `message.queued` each, to both endpoints: A answers 200, B is down.
    await b.down();
    messages = await insertQueued(t.store, 3, t.clock.now(), 'outbox');
    await d.pump();
  });
  afterEach(async () => {
    await closer.closeAll();
  });

  const page = async (path: string): Promise<Page> => {
    const res = await admin(t, 'GET', path);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Page>();
  };

  it.skipIf(skip)('the log per endpoint and for the organization, filtered and paginated newest first', async () => {
    const ofA = await page(`${HOOKS}/a/deliveries`);
    expect(ofA.items).toHaveLength(3);
    expect(ofA.next_cursor).toBeNull();
    expect(ofA.items.every((x) => x.endpoint_id === 'a' && x.state === 'succeeded' && x.event_type === 'message.queued')).toBe(
      true,
    );
    expect(ofA.items[0]?.log).toEqual([
      expect.objectContaining({ attempt: 1, status: 200, response_body: 'answer 200', error: null }),
    ]);
    expect(ofA.items.map((x) => x.message_id)).toEqual([...messages].reverse());
    expect(a.received.every((r) => r.verifiedWith.length === 1)).toBe(true);

    expect((await page(`${HOOKS}/a/deliveries?state=pending`)).items).toEqual([]);
    const pendingB = await page(`${HOOKS}/b/deliveries?state=pending`);
    expect(pendingB.items).toHaveLength(3);
    expect(pendingB.items[0]?.log[0]).toMatchObject({ status: null, error: expect.any(String) });
    expect((await page(`${HOOKS}/deliveries?endpoint=b&state=succeeded`)).items).toEqual([]);
    expect((await page(`${HOOKS}/deliveries?message_id=${messages[1]}`)).items.map((x) => x.endpoint_id).sort()).toEqual([
      'a',
      'b',
    ]);
    expect((await page(`${HOOKS}/deliveries?event_type=message.queued`)).items).toHaveLength(6);
    expect((await page(`${HOOKS}/deliveries?event_type=message.delivered`)).items).toEqual([]);

    // Pages of 4 then 2: every delivery once, newest first.
    const first = await page(`${HOOKS}/deliveries?limit=4`);
    expect(first.items).toHaveLength(4);
    expect(first.next_cursor).not.toBeNull();
    const second = await page(`${HOOKS}/deliveries?limit=4&cursor=${first.next_cursor}`);
    expect(second.items).toHaveLength(2);
    expect(second.next_cursor).toBeNull();
    const ids = [...first.items, ...second.items].map((x) => Number(x.id.slice(4)));
    expect(ids).toEqual([...ids].sort((x, y) => y - x));
    expect(new Set(ids).size).toBe(6);

    const one = await admin(t, 'GET', `${HOOKS}/deliveries/${ofA.items[0]?.id}`);
    expect(one.json<Delivery>()).toMatchObject({ id: ofA.items[0]?.id, webhook_id: `${messages[2]}.1` });
  });

  it.skipIf(skip)(
    "outcome is the state filter by the issue's word; unknown query parameters are refused as the query's",
    async () => {
      expect((await page(`${HOOKS}/a/deliveries?outcome=succeeded`)).items).toHaveLength(3);
      expect((await page(`${HOOKS}/a/deliveries?outcome=failed`)).items).toEqual([]);
      expect((await page(`${HOOKS}/deliveries?outcome=pending`)).items.map((x) => x.endpoint_id)).toEqual(['b', 'b', 'b']);
      expect((await page(`${HOOKS}/deliveries?outcome=pending&state=pending`)).items).toHaveLength(3);
      expectInvalidField(await admin(t, 'GET', `${HOOKS}/deliveries?outcome=pending&state=failed`), 'outcome');
      expectInvalidField(await admin(t, 'GET', `${HOOKS}/a/deliveries?outcome=lost`), 'outcome');
      const unknown = expectError(await admin(t, 'GET', `${HOOKS}/a/deliveries?status=failed`), 400, 'invalid_body');
      expect(unknown.details?.fields?.[0]?.field).toBe('status');
      expect(unknown.message).toMatch(/^The request query is invalid/);
      expectInvalidField(await admin(t, 'GET', `${HOOKS}/deliveries?endpoint=a&foo=1`), 'foo');
      const cursor = expectError(await admin(t, 'GET', `${HOOKS}/deliveries?cursor=bm9wZQ`), 400, 'invalid_body');
      expect(cursor.message).toMatch(/^The request query is invalid: cursor/);
    },
  );

  it.skipIf(skip)('refuses unknown filters and answers 404 for unknown endpoints and deliveries', async () => {
    expectInvalidField(await admin(t, 'GET', `${HOOKS}/a/deliveries?state=lost`), 'state');
    expectInvalidField(await admin(t, 'GET', `${HOOKS}/deliveries?event_type=message.exploded`), 'event_type');
    expectInvalidField(await admin(t, 'GET', `${HOOKS}/deliveries?limit=0`), 'limit');
    expectInvalidField(await admin(t, 'GET', `${HOOKS}/deliveries?cursor=bm9wZQ`), 'cursor');
    expectInvalidField(await admin(t, 'GET', `${HOOKS}/deliveries?message_id=a%00b`), 'message_id');
    expectError(await admin(t, 'GET', `${HOOKS}/deliveries?endpoint=nope`), 404, 'not_found');
    expectError(await admin(t, 'GET', `${HOOKS}/nope/deliveries`), 404, 'not_found');
    expectError(await admin(t, 'GET', `${HOOKS}/deliveries/whd_999999`), 404, 'not_found');
    expectError(await admin(t, 'GET', `${HOOKS}/deliveries/garbage`), 404, 'not_found');
    expectError(await admin(t, 'GET', '/organizations/nobody/webhooks/deliveries'), 404, 'not_found');
    expectError(await admin(t, 'POST', `${HOOKS}/deliveries/whd_999999/replay`), 404, 'not_found');
    expectError(
      await admin(t, 'POST', `${HOOKS}/nope/replay`, { since: '2020-01-01T00:00:00Z', until: '2030-01-01T00:00:00Z' }),
      404,
      'not_found',
    );
    // Another organization's delivery is not found either.
    await createOrg(t, 'other');
    const [mine] = (await page(`${HOOKS}/a/deliveries`)).items;
    expectError(await admin(t, 'GET', `/organizations/other/webhooks/deliveries/${mine?.id}`), 404, 'not_found');
  });

  it.skipIf(skip)('replay of one delivery and of a range: 202, sent again with the same webhook-id and body', async () => {
    const [newest] = (await page(`${HOOKS}/a/deliveries`)).items;
    const replayed = await admin(t, 'POST', `${HOOKS}/deliveries/${newest?.id}/replay`);
    expect(replayed.statusCode, replayed.body).toBe(202);
    expect(replayed.json()).toEqual({ queued: 1, endpoint_enabled: true });
    await d.pump();
    const again = a.withId(`${messages[2]}.1`);
    expect(again).toHaveLength(2);
    expect(again[0]?.body).toBe(again[1]?.body);
    expect(again.every((r) => r.verifiedWith.length === 1)).toBe(true);

    const since = new Date(t.clock.now() - 60_000).toISOString();
    const until = new Date(t.clock.now() + 60_000).toISOString();
    const onlyFailed = await admin(t, 'POST', `${HOOKS}/a/replay`, { since, until, only_failed: true });
    expect(onlyFailed.statusCode, onlyFailed.body).toBe(202);
    expect(onlyFailed.json()).toEqual({ queued: 0, endpoint_enabled: true });
    const range = await admin(t, 'POST', `${HOOKS}/a/replay`, { since, until });
    expect(range.json()).toEqual({ queued: 3, endpoint_enabled: true });
    await d.pump();
    for (const m of messages) expect(a.withId(`${m}.1`).length).toBeGreaterThanOrEqual(2);

    expectInvalidField(await admin(t, 'POST', `${HOOKS}/a/replay`, { since: until, until: since }), 'until');
    expectInvalidField(await admin(t, 'POST', `${HOOKS}/a/replay`, { since: 'yesterday', until }), 'since');
    expectInvalidField(await admin(t, 'POST', `${HOOKS}/a/replay`, { until }), 'since');
    // At most 31 days: a year (or 0001 to 9999) is refused before anything is read.
    const long = expectError(
      await admin(t, 'POST', `${HOOKS}/a/replay`, { since, until: new Date(t.clock.now() + 32 * 86_400_000).toISOString() }),
      400,
      'invalid_body',
    );
    expect(long.details?.fields).toEqual([{ field: 'until', message: 'must be at most 31 days after since' }]);
    expectInvalidField(
      await admin(t, 'POST', `${HOOKS}/a/replay`, { since: '0001-01-01T00:00:00Z', until: '9999-12-31T00:00:00Z' }),
      'until',
    );
    const month = await admin(t, 'POST', `${HOOKS}/a/replay`, {
      since,
      until: new Date(t.clock.now() - 60_000 + 31 * 86_400_000).toISOString(),
    });
    expect(month.statusCode, month.body).toBe(202);
  });

  it.skipIf(skip)('one delivery under its endpoint: read and replayed there, 404 under another endpoint', async () => {
    const [ofA] = (await page(`${HOOKS}/a/deliveries`)).items;
    const id = ofA?.id ?? '';
    const under = await admin(t, 'GET', `${HOOKS}/a/deliveries/${id}`);
    expect(under.statusCode, under.body).toBe(200);
    expect(under.json<Delivery>()).toEqual((await admin(t, 'GET', `${HOOKS}/deliveries/${id}`)).json<Delivery>());
    expectError(await admin(t, 'GET', `${HOOKS}/b/deliveries/${id}`), 404, 'not_found');
    expectError(await admin(t, 'GET', `${HOOKS}/nope/deliveries/${id}`), 404, 'not_found');
    expectError(await admin(t, 'POST', `${HOOKS}/b/deliveries/${id}/replay`), 404, 'not_found');
    const replayed = await admin(t, 'POST', `${HOOKS}/a/deliveries/${id}/replay`);
    expect(replayed.statusCode, replayed.body).toBe(202);
    expect(replayed.json()).toEqual({ queued: 1, endpoint_enabled: true });
    await d.pump();
    expect(a.withId(ofA?.webhook_id ?? '')).toHaveLength(2);
  });

  it.skipIf(skip)(
    'replay of a delivery being sent answers 409 and changes nothing; to a disabled endpoint it is queued and says it waits',
    async () => {
      const [ofB] = (await page(`${HOOKS}/b/deliveries`)).items;
      const id = ofB?.id ?? '';
      // A worker holds it: its lease runs for another minute.
      await databaseOf(t.store)
        .updateTable('webhook_deliveries')
        .set({ lease_until: t.clock.now() + 60_000 })
        .where('id', '=', Number(id.slice(4)))
        .execute();
      const before = (await admin(t, 'GET', `${HOOKS}/deliveries/${id}`)).json<Delivery>();
      const busy = expectError(await admin(t, 'POST', `${HOOKS}/deliveries/${id}/replay`), 409, 'conflict');
      expect(busy.message).toMatch(/being sent right now/);
      expectError(await admin(t, 'POST', `${HOOKS}/b/deliveries/${id}/replay`), 409, 'conflict');
      expect((await admin(t, 'GET', `${HOOKS}/deliveries/${id}`)).json<Delivery>()).toEqual(before);

      await databaseOf(t.store)
        .updateTable('webhook_deliveries')
        .set({ lease_until: null })
        .where('id', '=', Number(id.slice(4)))
        .execute();
      expect((await admin(t, 'POST', `${HOOKS}/b/disable`)).statusCode).toBe(200);
      const waiting = await admin(t, 'POST', `${HOOKS}/deliveries/${id}/replay`);
      expect(waiting.statusCode, waiting.body).toBe(202);
      expect(waiting.json()).toEqual({
        queued: 1,
        endpoint_enabled: false,
        message: 'Endpoint "b" is disabled: the replay is queued and waits until the endpoint is enabled again.',
      });
      const since = new Date(t.clock.now() - 60_000).toISOString();
      const until = new Date(t.clock.now() + 60_000).toISOString();
      expect((await admin(t, 'POST', `${HOOKS}/b/replay`, { since, until })).json()).toMatchObject({
        endpoint_enabled: false,
        message: expect.stringMatching(/waits/),
      });
    },
  );

  it.skipIf(skip)(
    "test sends a signed webhook.test now and answers the receiver's status; after a rotation both secrets verify",
    async () => {
      a.script([503]);
      const failed = await admin(t, 'POST', `${HOOKS}/a/test`);
      expect(failed.statusCode, failed.body).toBe(200);
      expect(failed.json()).toMatchObject({ ok: false, status: 503, delivery_id: expect.stringMatching(/^whd_\d+$/) });
      const ok = await admin(t, 'POST', `${HOOKS}/a/test`);
      const result = ok.json<{ ok: boolean; status: number; error: string | null; duration_ms: number; delivery_id: string }>();
      expect(result).toMatchObject({ ok: true, status: 200, error: null });
      const last = a.received[a.received.length - 1];
      expect(last?.verifiedWith).toEqual([A_SECRET]);
      expect(last?.payload).toMatchObject({ type: 'webhook.test', data: { organization_id: 'acme', endpoint_id: 'a' } });
      expect((await admin(t, 'GET', `${HOOKS}/deliveries/${result.delivery_id}`)).json<Delivery>()).toMatchObject({
        event_type: 'webhook.test',
        state: 'succeeded',
        attempts: 1,
      });
      // A test event is sent when asked for, never queued: a replay of one would wait forever, so it is refused.
      const noReplay = expectError(await admin(t, 'POST', `${HOOKS}/deliveries/${result.delivery_id}/replay`), 409, 'conflict');
      expect(noReplay.message).toMatch(/webhook\.test.*not replayed/);

      // A receiver that is down: still a 200 from the call, ok false, the error said.
      const down = (await admin(t, 'POST', `${HOOKS}/b/test`)).json<{
        ok: boolean;
        status: number | null;
        error: string | null;
      }>();
      expect(down).toMatchObject({ ok: false, status: null, error: expect.any(String) });

      const rotated = (await admin(t, 'POST', `${HOOKS}/a/rotate-secret`)).json<{ secret: string }>();
      a.secrets = [rotated.secret, A_SECRET];
      await admin(t, 'POST', `${HOOKS}/a/test`);
      expect(a.received[a.received.length - 1]?.verifiedWith).toEqual([rotated.secret, A_SECRET]);
      expectError(await admin(t, 'POST', `${HOOKS}/nope/test`), 404, 'not_found');
    },
  );
});
