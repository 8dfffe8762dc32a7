import { expect, it } from 'vitest';
import { insertQueued } from '../support/delivery.js';
import { databaseOf } from '../support/db.js';
import {
  deliveryRows,
  insertEndpoint,
  setEndpointFields,
  testDispatcher,
  useWebhookStore,
} from '../support/webhooks/dispatch.js';
import { startReceiver, testSecret } from '../support/webhooks/receiver.js';
import { describeDialects } from '../support/dialects.js';

const SECRET = testSecret(5);
const LEASE = 60_000;

describeDialects('webhook claims on %s', (dialect, skip) => {
  const t = useWebhookStore(dialect, skip);

  /** A claim as the dispatcher makes it, with no local skip list: what another process would get. */
  const claim = (limit: number, perEndpoint: number) =>
    t.store.transaction((tx) => tx.webhookDeliveries.claim(t.clock.now(), limit, LEASE, [], perEndpoint), { durable: false });
  const endpoint = (id: string) =>
    insertEndpoint(t.store, { id, url: `http://127.0.0.1:9/${id}`, secret: SECRET }, t.clock.now());

  it.skipIf(t.skip)(
    'the per-endpoint cap counts rows leased by any process; an expired lease frees the slot and the row is due again',
    async () => {
      await endpoint('wh_a');
      await insertQueued(t.store, 5, t.clock.now(), 'outbox');
      expect(await claim(10, 2)).toHaveLength(2);
      expect(await claim(10, 2)).toHaveLength(0);
      t.clock.advance(LEASE + 1);
      const again = await claim(10, 2);
      expect(again).toHaveLength(2);
      expect(again.every((d) => d.lease_until === t.clock.now() + LEASE)).toBe(true);
      expect(await claim(10, 3)).toHaveLength(1);
    },
  );

  it.skipIf(t.skip)(
    "an older backlog of one endpoint fills a claim only until its cap, then the others come; a disabled endpoint's backlog " +
      'blocks nobody',
    async () => {
      await endpoint('wh_off');
      await insertQueued(t.store, 40, t.clock.now(), 'outbox');
      await setEndpointFields(t.store, 'wh_off', { enabled: 0, disabled_reason: '410 Gone' });
      t.clock.advance(1);
      await endpoint('wh_a');
      await insertQueued(t.store, 40, t.clock.now(), 'outbox');
      t.clock.advance(1);
      await endpoint('wh_b');
      await insertQueued(t.store, 1, t.clock.now(), 'outbox');
      const first = await claim(1, 1);
      expect(first.map((d) => d.endpoint_id)).toEqual(['wh_a']);
      const second = await claim(1, 1);
      expect(second.map((d) => d.endpoint_id)).toEqual(['wh_b']);
      expect(await claim(10, 1)).toHaveLength(0);
    },
  );

  it.skipIf(t.skip)(
    'release gives claimed rows back due now, all in one call; a row whose lease moved on is not touched',
    async () => {
      await endpoint('wh_a');
      await insertQueued(t.store, 3, t.clock.now(), 'outbox');
      const claimed = await claim(10, 10);
      expect(claimed).toHaveLength(3);
      const [a, b, c] = claimed;
      t.clock.advance(5);
      await t.store.transaction(
        (tx) =>
          tx.webhookDeliveries.release(
            [
              { id: a?.id ?? 0, lease: a?.lease_until ?? 0 },
              { id: b?.id ?? 0, lease: b?.lease_until ?? 0 },
              { id: c?.id ?? 0, lease: 1 },
            ],
            t.clock.now(),
          ),
        { durable: false },
      );
      const rows = await deliveryRows(t.store);
      const byId = new Map(rows.map((r) => [Number(r.id), r]));
      expect([byId.get(a?.id ?? 0)?.lease_until, byId.get(a?.id ?? 0)?.next_attempt_at]).toEqual([null, t.clock.now()]);
      expect(byId.get(b?.id ?? 0)?.lease_until).toBeNull();
      expect(byId.get(c?.id ?? 0)?.lease_until).toBe(c?.lease_until);
      expect((await claim(10, 10)).map((d) => d.id).sort()).toEqual([a?.id, b?.id].sort());
    },
  );

  it.skipIf(t.skip)('a test delivery left pending by a crash is never claimed and counts in no backlog', async () => {
    await endpoint('wh_a');
    await t.store.webhookDeliveries.insertTest('acme', 'wh_a', t.clock.now(), t.clock.now() + 1000);
    t.clock.advance(2000);
    expect(await claim(10, 10)).toHaveLength(0);
    expect(await t.store.webhookDeliveries.stats(t.clock.now())).toEqual([]);
    await insertQueued(t.store, 1, t.clock.now(), 'outbox');
    expect(await t.store.webhookDeliveries.stats(t.clock.now())).toEqual([
      { org_id: 'acme', endpoint_id: 'wh_a', backlog: 1, oldestPendingAgeMs: 0 },
    ]);
  });

  it.skipIf(t.skip)(
    'a delivery whose event is gone fails without a request, its payload stays null, and a replay never posts an empty body',
    async () => {
      const r = await startReceiver([SECRET], t.closer);
      await insertEndpoint(t.store, { id: 'wh_a', url: r.url, secret: SECRET }, t.clock.now());
      const row = await databaseOf(t.store)
        .insertInto('webhook_deliveries')
        .values({
          org_id: 'acme',
          endpoint_id: 'wh_a',
          event_id: 987_654,
          message_id: 'msg_gone',
          event_type: 'message.delivered',
          message_status: 'delivered',
          sequence: 2,
          payload: null,
          state: 'pending',
          attempts: 0,
          next_attempt_at: t.clock.now(),
          lease_until: null,
          last_status: null,
          last_error: null,
          created_at: t.clock.now(),
          updated_at: t.clock.now(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const d = testDispatcher(t.store, t.clock, t.closer);
      await d.pump();
      const failed = await t.store.webhookDeliveries.get('acme', `whd_${Number(row.id)}`);
      expect(failed).toMatchObject({ state: 'failed', attempts: 1, last_error: 'the event or its message is no longer stored' });
      expect((await deliveryRows(t.store))[0]?.payload).toBeNull();
      expect((await t.store.webhookDeliveries.replayOne('acme', `whd_${Number(row.id)}`, t.clock.now())).outcome).toBe('queued');
      await d.pump();
      expect(r.received).toHaveLength(0);
      expect((await deliveryRows(t.store))[0]).toMatchObject({ state: 'failed', payload: null });
    },
  );
});
