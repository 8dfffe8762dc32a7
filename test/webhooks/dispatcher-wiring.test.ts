import { expect, it } from 'vitest';
import { buildServices, createDispatcher } from '../../src/cli/runtime.js';
import { insertQueued } from '../support/delivery.js';
import { testConfig } from '../support/app.js';
import { waitFor } from '../support/smtp-sink.js';
import { insertEndpoint, useWebhookStore } from '../support/webhooks/dispatch.js';
import { startReceiver, testSecret } from '../support/webhooks/receiver.js';
import { describeDialects } from '../support/dialects.js';
import { watchTransactions } from '../support/watched-store.js';

const SECRET = testSecret(11);

describeDialects('webhook dispatcher wiring (buildServices) on %s', (dialect, skip) => {
  const t = useWebhookStore(dialect, skip);

  it.skipIf(t.skip)(
    'the process notifier wakes the dispatcher: a recorded event goes out without waiting for the poll',
    async () => {
      const r = await startReceiver([SECRET], t.closer);
      await insertEndpoint(t.store, { id: 'wh_1', url: r.url, secret: SECRET, events: ['message.delivered'] }, t.clock.now());
      const watched = watchTransactions(t.store);
      const services = buildServices(testConfig({ MAILROOM_WEBHOOK_RETRY_SCHEDULE: '0,1' }), {
        store: watched.store,
        clock: t.clock,
      });
      t.closer.defer(() => services.close());
      // A poll a minute apart: only a nudge can make the delivery go out within the test.
      const dispatcher = createDispatcher(services, 60_000);
      t.closer.defer(() => dispatcher.stop(1000));
      dispatcher.start();
      const [id = ''] = await insertQueued(t.store, 1, t.clock.now(), 'outbox');
      // Its first claim has come back empty: it now sleeps for its minute.
      await waitFor(() => watched.claims() >= 1, 5_000, "the dispatcher's first claim");
      await t.store.messages.appendEvent(id, 'delivered', t.clock.now(), t.clock.now(), {
        provider: 'ses',
        recipient: 'owner@acme.test',
      });
      services.notifier.notify({
        messageId: id,
        orgId: 'acme',
        type: 'delivered',
        at: t.clock.now(),
        recipient: 'owner@acme.test',
        detail: {},
      });
      await waitFor(() => r.received.length === 1, 10_000, 'the nudged delivery');
      expect(r.received[0]?.verifiedWith).toEqual([SECRET]);
      expect(r.received[0]?.payload).toMatchObject({
        type: 'message.delivered',
        data: { message_id: id, status: 'queued', recipient: 'owner@acme.test' },
      });
      // The receiver answered before the outcome was recorded and counted: wait for both.
      await waitFor(
        async () =>
          (await services.metrics.registry.metrics()).includes('mailroom_webhook_deliveries_total{outcome="succeeded"} 1'),
        10_000,
        'the count',
      );
      expect(await t.store.webhookDeliveries.list('acme', { state: 'succeeded' }, 10)).toHaveLength(1);
    },
  );
});
