import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../src/domain/clock.js';
import { REPLAY_MAX_RANGE_MS, ReplayRangeTooLong } from '../../src/storage/webhook-deliveries.js';
import type { Store } from '../../src/storage/store.js';
import { insertQueued } from '../delivery/harness.js';
import { Closer } from '../support/cleanup.js';
import { seedOrg } from '../support/seed.js';
import { DIALECTS, freshStore, postgresAvailable } from '../support/stores.js';
import { deliveryRows, insertEndpoint, nowClock, setEndpointFields, startReceiver, testDispatcher, testSecret } from './support.js';

const pgUp = await postgresAvailable();
const SECRET = testSecret(9);
const DAY = 86_400_000;

describe.each(DIALECTS)('webhook replays on %s', (dialect) => {
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

  it.skipIf(skip)('one delivery: in flight is left alone (in_flight), else queued; another endpoint\'s id is not found; a disabled endpoint says so', async () => {
    await insertEndpoint(store, { id: 'wh_1', url: 'http://127.0.0.1:9/hook', secret: SECRET }, clock.now());
    await insertQueued(store, 1, clock.now(), 'outbox');
    const claimed = await store.transaction((tx) => tx.webhookDeliveries.claim(clock.now(), 10, 60_000, []), { durable: false });
    expect(claimed).toHaveLength(1);
    const id = `whd_${claimed[0]?.id ?? 0}`;
    expect(await store.webhookDeliveries.replayOne('acme', id, clock.now())).toEqual({ outcome: 'in_flight', endpointId: 'wh_1', endpointEnabled: true });
    expect((await deliveryRows(store))[0]?.lease_until).toBe(clock.now() + 60_000);
    clock.advance(60_001);
    expect(await store.webhookDeliveries.replayOne('acme', id, clock.now(), 'wh_1')).toEqual({ outcome: 'queued', endpointId: 'wh_1', endpointEnabled: true });
    expect(await store.webhookDeliveries.replayOne('acme', id, clock.now(), 'wh_other')).toEqual({ outcome: 'not_found' });
    expect(await store.webhookDeliveries.replayOne('acme', 'whd_999999', clock.now())).toEqual({ outcome: 'not_found' });
    await setEndpointFields(store, 'wh_1', { enabled: 0, disabled_reason: 'operator' });
    expect(await store.webhookDeliveries.replayOne('acme', id, clock.now())).toEqual({ outcome: 'queued', endpointId: 'wh_1', endpointEnabled: false });
  });

  it.skipIf(skip)('a range longer than 31 days is refused; exactly 31 days is worked', async () => {
    await insertEndpoint(store, { id: 'wh_1', url: 'http://127.0.0.1:9/hook', secret: SECRET }, clock.now());
    const until = clock.now();
    await expect(store.webhookDeliveries.replayRange('acme', 'wh_1', { since: until - REPLAY_MAX_RANGE_MS - 1, until, onlyFailed: false }, until))
      .rejects.toBeInstanceOf(ReplayRangeTooLong);
    await expect(store.webhookDeliveries.replayRange('acme', 'wh_1', { since: Date.UTC(1, 0, 1), until: Date.UTC(9999, 0, 1), onlyFailed: false }, until))
      .rejects.toThrow(/at most 31 days/);
    expect(await store.webhookDeliveries.replayRange('acme', 'wh_1', { since: until - REPLAY_MAX_RANGE_MS, until, onlyFailed: false }, until)).toBe(0);
  });

  it.skipIf(skip)('events of messages created up to 7 days before since are replayed, older ones not; each delivered and verified', async () => {
    const r = await startReceiver([SECRET], closer);
    const since = clock.now() - DAY;
    const [recent] = await insertQueued(store, 1, since - 6 * DAY, 'outbox');
    const [old] = await insertQueued(store, 1, since - 8 * DAY, 'outbox');
    for (const id of [recent, old]) await store.messages.appendEvent(id ?? '', 'delivered', since + 1, clock.now(), { provider: 'ses', recipient: 'owner@acme.test' });
    // Registered after the events: only a replay brings them.
    await insertEndpoint(store, { id: 'wh_1', url: r.url, secret: SECRET, events: ['message.delivered'] }, clock.now());
    expect(await deliveryRows(store)).toHaveLength(0);
    expect(await store.webhookDeliveries.replayRange('acme', 'wh_1', { since, until: clock.now(), onlyFailed: false }, clock.now())).toBe(1);
    const d = testDispatcher(store, clock, closer);
    await d.pump();
    expect(r.received.map((x) => x.webhookId)).toEqual([`${recent}.2`]);
    expect(r.received[0]?.verifiedWith).toEqual([SECRET]);
  });

  it.skipIf(skip)('a range over more messages than one slice (500) queues each once; a second replay queues them again', async () => {
    const since = clock.now();
    await insertQueued(store, 501, since, 'outbox');
    await insertEndpoint(store, { id: 'wh_1', url: 'http://127.0.0.1:9/hook', secret: SECRET }, clock.now());
    clock.advance(1);
    const range = { since, until: clock.now(), onlyFailed: false };
    expect(await store.webhookDeliveries.replayRange('acme', 'wh_1', range, clock.now())).toBe(501);
    const rows = await deliveryRows(store);
    expect(rows).toHaveLength(501);
    expect(new Set(rows.map((x) => x.message_id)).size).toBe(501);
    expect(rows.every((x) => x.sequence === 1 && x.event_type === 'message.queued' && x.next_attempt_at === clock.now())).toBe(true);
    expect(await store.webhookDeliveries.replayRange('acme', 'wh_1', range, clock.now())).toBe(501);
    expect(await deliveryRows(store)).toHaveLength(501);
  });
});
