import { expect, it } from 'vitest';
import { insertQueued } from '../support/delivery.js';
import { waitFor } from '../support/smtp-sink.js';
import { openTestStore } from '../support/stores.js';
import { deliveryRows, insertEndpoint, testDispatcher, useWebhookStore } from '../support/webhooks/dispatch.js';
import { startReceiver, testSecret } from '../support/webhooks/receiver.js';
import { describeDialects } from '../support/dialects.js';

const SECRET = testSecret(9);

describeDialects('webhook dispatcher pacing on %s', (dialect, skip) => {
  const t = useWebhookStore(dialect, skip);

  it.skipIf(t.skip)('a hanging endpoint holds only its own slots until the timeout; another endpoint keeps flowing', async () => {
    const hang = await startReceiver([SECRET], t.closer);
    hang.fallback = 'hang';
    const ok = await startReceiver([SECRET], t.closer);
    await insertEndpoint(t.store, { id: 'wh_hang', url: hang.url, secret: SECRET }, t.clock.now());
    await insertEndpoint(t.store, { id: 'wh_ok', url: ok.url, secret: SECRET }, t.clock.now());
    const d = testDispatcher(t.store, t.clock, t.closer, { endpointConcurrency: 2, attemptTimeoutMs: 1500 });
    await insertQueued(t.store, 10, t.clock.now(), 'outbox');
    d.dispatcher.start();
    await waitFor(() => ok.received.length === 10, 10_000, 'the healthy endpoint to get its 10 events');
    // Meanwhile the hanging endpoint had its 2 slots, and no more.
    expect(hang.received).toHaveLength(2);
    await waitFor(
      async () =>
        (await t.store.webhookDeliveries.list('acme', { endpointId: 'wh_hang' }, 20)).filter((x) => x.log.length > 0).length ===
        2,
      10_000,
      'the timeouts to be recorded',
    );
    const hung = (await t.store.webhookDeliveries.list('acme', { endpointId: 'wh_hang' }, 20)).filter((x) => x.log.length > 0);
    for (const h of hung) {
      expect(h.state).toBe('pending');
      expect(h.log[0]?.status).toBeNull();
      expect(h.log[0]?.error).toMatch(/timeout/i);
    }
    expect(ok.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
    expect(new Set(ok.received.map((x) => x.webhookId)).size).toBe(10);
  });

  it.skipIf(t.skip || dialect !== 'postgres')(
    'two dispatchers over their own connections share a burst: each delivery is received exactly once',
    { timeout: 60_000 },
    async () => {
      const r = await startReceiver([SECRET], t.closer);
      await insertEndpoint(t.store, { id: 'wh_a', url: r.url, secret: SECRET }, t.clock.now());
      await insertEndpoint(t.store, { id: 'wh_b', url: `${r.url}?b`, secret: SECRET }, t.clock.now());
      const other = await openTestStore(t.database.url, t.clock);
      t.closer.defer(() => other.close());
      const one = testDispatcher(t.store, t.clock, t.closer, { endpointConcurrency: 8 });
      const two = testDispatcher(other, t.clock, t.closer, { endpointConcurrency: 8 });
      const total = 150;
      await insertQueued(t.store, total, t.clock.now(), 'outbox');
      one.dispatcher.start();
      two.dispatcher.start();
      await waitFor(
        async () => (await deliveryRows(t.store)).every((x) => x.state === 'succeeded'),
        40_000,
        'every delivery to succeed',
      );
      expect(r.received).toHaveLength(total * 2);
      const perEndpoint = (b: boolean) => r.received.filter((x) => x.path.includes('?b') === b).map((x) => x.webhookId);
      expect(new Set(perEndpoint(false)).size).toBe(total);
      expect(new Set(perEndpoint(true)).size).toBe(total);
      expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
      const served = async (d: typeof one) =>
        await d.metrics.registry.getSingleMetricAsString('mailroom_webhook_deliveries_total');
      // Both took part (each one's counter has successes).
      expect(await served(one)).toMatch(/outcome="succeeded"} [1-9]/);
      expect(await served(two)).toMatch(/outcome="succeeded"} [1-9]/);
    },
  );

  it.skipIf(t.skip)('the backlog and the oldest pending age per endpoint are served at scrape time', async () => {
    await insertEndpoint(t.store, { id: 'wh_a', url: 'http://127.0.0.1:9/none', secret: SECRET }, t.clock.now());
    const d = testDispatcher(t.store, t.clock, t.closer);
    await insertQueued(t.store, 3, t.clock.now(), 'outbox');
    t.clock.advance(5000);
    const text = await d.metrics.registry.metrics();
    expect(text).toContain('mailroom_webhook_backlog{org="acme",endpoint="wh_a"} 3');
    expect(text).toContain('mailroom_webhook_oldest_pending_seconds{org="acme",endpoint="wh_a"} 5');
  });
});
