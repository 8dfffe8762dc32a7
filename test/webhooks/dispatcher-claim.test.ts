import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../src/domain/clock.js';
import type { Store } from '../../src/storage/store.js';
import { insertQueued } from '../delivery/harness.js';
import { Closer } from '../support/cleanup.js';
import { databaseOf } from '../support/db.js';
import { seedOrg } from '../support/seed.js';
import { DIALECTS, freshStore, postgresAvailable } from '../support/stores.js';
import { deliveryRows, insertEndpoint, nowClock, setEndpointFields, startReceiver, testDispatcher, testSecret } from './support.js';

const pgUp = await postgresAvailable();
const SECRET = testSecret(5);
const LEASE = 60_000;

describe.each(DIALECTS)('webhook claims on %s', (dialect) => {
  const skip = dialect === 'postgres' && !pgUp;
  let closer: Closer;
  let store: Store;
  let clock: ManualClock;
  beforeEach(async () => {
    closer = new Closer();
    if (skip) return;
    const t = await freshStore(dialect);
    closer.defer(() => t.cleanup());
    store = t.store;
    clock = nowClock(t.clock);
    await seedOrg(store);
  });
  afterEach(async () => {
    await closer.closeAll();
  });

  /** A claim as the dispatcher makes it, with no local skip list: what another process would get. */
  const claim = (limit: number, perEndpoint: number) =>
    store.transaction((tx) => tx.webhookDeliveries.claim(clock.now(), limit, LEASE, [], perEndpoint), { durable: false });
  const endpoint = (id: string) => insertEndpoint(store, { id, url: `http://127.0.0.1:9/${id}`, secret: SECRET }, clock.now());

  it.skipIf(skip)('the per-endpoint cap counts rows leased by any process; an expired lease frees the slot and the row is due again', async () => {
    await endpoint('wh_a');
    await insertQueued(store, 5, clock.now(), 'outbox');
    expect(await claim(10, 2)).toHaveLength(2);
    expect(await claim(10, 2)).toHaveLength(0);
    clock.advance(LEASE + 1);
    const again = await claim(10, 2);
    expect(again).toHaveLength(2);
    expect(again.every((d) => d.lease_until === clock.now() + LEASE)).toBe(true);
    expect(await claim(10, 3)).toHaveLength(1);
  });

  it.skipIf(skip)('an older backlog of one endpoint fills a claim only until its cap, then the others come; a disabled endpoint\'s backlog blocks nobody', async () => {
    await endpoint('wh_off');
    await insertQueued(store, 40, clock.now(), 'outbox');
    await setEndpointFields(store, 'wh_off', { enabled: 0, disabled_reason: '410 Gone' });
    clock.advance(1);
    await endpoint('wh_a');
    await insertQueued(store, 40, clock.now(), 'outbox');
    clock.advance(1);
    await endpoint('wh_b');
    await insertQueued(store, 1, clock.now(), 'outbox');
    const first = await claim(1, 1);
    expect(first.map((d) => d.endpoint_id)).toEqual(['wh_a']);
    const second = await claim(1, 1);
    expect(second.map((d) => d.endpoint_id)).toEqual(['wh_b']);
    expect(await claim(10, 1)).toHaveLength(0);
  });

  it.skipIf(skip)('release gives claimed rows back due now, all in one call; a row whose lease moved on is not touched', async () => {
    await endpoint('wh_a');
    await insertQueued(store, 3, clock.now(), 'outbox');
    const claimed = await claim(10, 10);
    expect(claimed).toHaveLength(3);
    const [a, b, c] = claimed;
    clock.advance(5);
    await store.transaction((tx) => tx.webhookDeliveries.release([
      { id: a?.id ?? 0, lease: a?.lease_until ?? 0 }, { id: b?.id ?? 0, lease: b?.lease_until ?? 0 }, { id: c?.id ?? 0, lease: 1 },
    ], clock.now()), { durable: false });
    const rows = await deliveryRows(store);
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    expect([byId.get(a?.id ?? 0)?.lease_until, byId.get(a?.id ?? 0)?.next_attempt_at]).toEqual([null, clock.now()]);
    expect(byId.get(b?.id ?? 0)?.lease_until).toBeNull();
    expect(byId.get(c?.id ?? 0)?.lease_until).toBe(c?.lease_until);
    expect((await claim(10, 10)).map((d) => d.id).sort()).toEqual([a?.id, b?.id].sort());
  });

  it.skipIf(skip)('a test delivery left pending by a crash is never claimed and counts in no backlog', async () => {
    await endpoint('wh_a');
    await store.webhookDeliveries.insertTest('acme', 'wh_a', clock.now(), clock.now() + 1000);
    clock.advance(2000);
    expect(await claim(10, 10)).toHaveLength(0);
    expect(await store.webhookDeliveries.stats(clock.now())).toEqual([]);
    await insertQueued(store, 1, clock.now(), 'outbox');
    expect(await store.webhookDeliveries.stats(clock.now())).toEqual([{ org_id: 'acme', endpoint_id: 'wh_a', backlog: 1, oldestPendingAgeMs: 0 }]);
  });

  it.skipIf(skip)('a delivery whose event is gone fails without a request, its payload stays null, and a replay never posts an empty body', async () => {
    const r = await startReceiver([SECRET], closer);
    await insertEndpoint(store, { id: 'wh_a', url: r.url, secret: SECRET }, clock.now());
    const row = await databaseOf(store).insertInto('webhook_deliveries').values({
      org_id: 'acme', endpoint_id: 'wh_a', event_id: 987_654, message_id: 'msg_gone', event_type: 'message.delivered', message_status: 'delivered',
      sequence: 2, payload: null, state: 'pending', attempts: 0, next_attempt_at: clock.now(), lease_until: null, last_status: null,
      last_error: null, created_at: clock.now(), updated_at: clock.now(),
    }).returning('id').executeTakeFirstOrThrow();
    const d = testDispatcher(store, clock, closer);
    await d.pump();
    const failed = await store.webhookDeliveries.get('acme', `whd_${Number(row.id)}`);
    expect(failed).toMatchObject({ state: 'failed', attempts: 1, last_error: 'the event or its message is no longer stored' });
    expect((await deliveryRows(store))[0]?.payload).toBeNull();
    expect((await store.webhookDeliveries.replayOne('acme', `whd_${Number(row.id)}`, clock.now())).outcome).toBe('queued');
    await d.pump();
    expect(r.received).toHaveLength(0);
    expect((await deliveryRows(store))[0]).toMatchObject({ state: 'failed', payload: null });
  });
});
