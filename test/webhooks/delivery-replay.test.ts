import { expect, it } from 'vitest';
import { REPLAY_MAX_RANGE_MS, ReplayRangeTooLong } from '../../src/storage/webhook-deliveries.js';
import { insertQueued } from '../support/delivery.js';
import {
  deliveryRows,
  insertEndpoint,
  setEndpointFields,
  testDispatcher,
  useWebhookStore,
} from '../support/webhooks/dispatch.js';
import { startReceiver, testSecret } from '../support/webhooks/receiver.js';
import { describeDialects } from '../support/dialects.js';

const SECRET = testSecret(9);
const DAY = 86_400_000;

describeDialects('webhook replays on %s', (dialect, skip) => {
  const t = useWebhookStore(dialect, skip);

  it.skipIf(t.skip)(
    "one delivery: in flight is left alone (in_flight), else queued; another endpoint's id is not found; a disabled endpoint " +
      'says so',
    async () => {
      await insertEndpoint(t.store, { id: 'wh_1', url: 'http://127.0.0.1:9/hook', secret: SECRET }, t.clock.now());
      await insertQueued(t.store, 1, t.clock.now(), 'outbox');
      const claimed = await t.store.transaction((tx) => tx.webhookDeliveries.claim(t.clock.now(), 10, 60_000, []), {
        durable: false,
      });
      expect(claimed).toHaveLength(1);
      const id = `whd_${claimed[0]?.id ?? 0}`;
      expect(await t.store.webhookDeliveries.replayOne('acme', id, t.clock.now())).toEqual({
        outcome: 'in_flight',
        endpointId: 'wh_1',
        endpointEnabled: true,
      });
      expect((await deliveryRows(t.store))[0]?.lease_until).toBe(t.clock.now() + 60_000);
      t.clock.advance(60_001);
      expect(await t.store.webhookDeliveries.replayOne('acme', id, t.clock.now(), 'wh_1')).toEqual({
        outcome: 'queued',
        endpointId: 'wh_1',
        endpointEnabled: true,
      });
      expect(await t.store.webhookDeliveries.replayOne('acme', id, t.clock.now(), 'wh_other')).toEqual({ outcome: 'not_found' });
      expect(await t.store.webhookDeliveries.replayOne('acme', 'whd_999999', t.clock.now())).toEqual({ outcome: 'not_found' });
      await setEndpointFields(t.store, 'wh_1', { enabled: 0, disabled_reason: 'operator' });
      expect(await t.store.webhookDeliveries.replayOne('acme', id, t.clock.now())).toEqual({
        outcome: 'queued',
        endpointId: 'wh_1',
        endpointEnabled: false,
      });
    },
  );

  it.skipIf(t.skip)('a range longer than 31 days is refused; exactly 31 days is worked', async () => {
    await insertEndpoint(t.store, { id: 'wh_1', url: 'http://127.0.0.1:9/hook', secret: SECRET }, t.clock.now());
    const until = t.clock.now();
    await expect(
      t.store.webhookDeliveries.replayRange(
        'acme',
        'wh_1',
        { since: until - REPLAY_MAX_RANGE_MS - 1, until, onlyFailed: false },
        until,
      ),
    ).rejects.toBeInstanceOf(ReplayRangeTooLong);
    await expect(
      t.store.webhookDeliveries.replayRange(
        'acme',
        'wh_1',
        { since: Date.UTC(1, 0, 1), until: Date.UTC(9999, 0, 1), onlyFailed: false },
        until,
      ),
    ).rejects.toThrow(/at most 31 days/);
    expect(
      await t.store.webhookDeliveries.replayRange(
        'acme',
        'wh_1',
        { since: until - REPLAY_MAX_RANGE_MS, until, onlyFailed: false },
        until,
      ),
    ).toBe(0);
  });

  it.skipIf(t.skip)(
    'events of messages created up to 7 days before since are replayed, older ones not; each delivered and verified',
    async () => {
      const r = await startReceiver([SECRET], t.closer);
      const since = t.clock.now() - DAY;
      const [recent] = await insertQueued(t.store, 1, since - 6 * DAY, 'outbox');
      const [old] = await insertQueued(t.store, 1, since - 8 * DAY, 'outbox');
      for (const id of [recent, old])
        await t.store.messages.appendEvent(id ?? '', 'delivered', since + 1, t.clock.now(), {
          provider: 'ses',
          recipient: 'owner@acme.test',
        });
      // Registered after the events: only a replay brings them.
      await insertEndpoint(t.store, { id: 'wh_1', url: r.url, secret: SECRET, events: ['message.delivered'] }, t.clock.now());
      expect(await deliveryRows(t.store)).toHaveLength(0);
      expect(
        await t.store.webhookDeliveries.replayRange(
          'acme',
          'wh_1',
          { since, until: t.clock.now(), onlyFailed: false },
          t.clock.now(),
        ),
      ).toBe(1);
      const d = testDispatcher(t.store, t.clock, t.closer);
      await d.pump();
      expect(r.received.map((x) => x.webhookId)).toEqual([`${recent}.2`]);
      expect(r.received[0]?.verifiedWith).toEqual([SECRET]);
    },
  );

  it.skipIf(t.skip)(
    'a range over more messages than one slice (500) queues each once; a second replay queues them again',
    async () => {
      const since = t.clock.now();
      await insertQueued(t.store, 501, since, 'outbox');
      await insertEndpoint(t.store, { id: 'wh_1', url: 'http://127.0.0.1:9/hook', secret: SECRET }, t.clock.now());
      t.clock.advance(1);
      const range = { since, until: t.clock.now(), onlyFailed: false };
      expect(await t.store.webhookDeliveries.replayRange('acme', 'wh_1', range, t.clock.now())).toBe(501);
      const rows = await deliveryRows(t.store);
      expect(rows).toHaveLength(501);
      expect(new Set(rows.map((x) => x.message_id)).size).toBe(501);
      expect(
        rows.every((x) => x.sequence === 1 && x.event_type === 'message.queued' && x.next_attempt_at === t.clock.now()),
      ).toBe(true);
      expect(await t.store.webhookDeliveries.replayRange('acme', 'wh_1', range, t.clock.now())).toBe(501);
      expect(await deliveryRows(t.store)).toHaveLength(501);
    },
  );
});
