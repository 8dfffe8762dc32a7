import { expect, it } from 'vitest';
import { housekeeping } from '../../src/delivery/housekeeping.js';
import { insertQueued } from '../support/delivery.js';
import { databaseOf } from '../support/db.js';
import { createWebhookHttp } from '../../src/webhooks/http-post.js';
import { sendTestEvent } from '../../src/webhooks/test-event.js';
import { deliveryRows, insertEndpoint, testDispatcher, testSettings, useWebhookStore } from '../support/webhooks/dispatch.js';
import { startReceiver, testSecret } from '../support/webhooks/receiver.js';
import { describeDialects } from '../support/dialects.js';

const SECRET = testSecret(3);
const DAY = 86_400_000;

describeDialects('webhook deliveries and retention on %s', (dialect, skip) => {
  const t = useWebhookStore(dialect, skip);

  it.skipIf(t.skip)('deliveries and their attempts go with their message; test deliveries go by age', async () => {
    const r = await startReceiver([SECRET], t.closer);
    await insertEndpoint(t.store, { id: 'wh_1', url: r.url, secret: SECRET }, t.clock.now());
    const [old] = await insertQueued(t.store, 1, t.clock.now(), 'outbox');
    const d = testDispatcher(t.store, t.clock, t.closer);
    await d.pump();
    const settings = testSettings();
    const http = createWebhookHttp({ policy: settings.urlPolicy, timeoutMs: settings.attemptTimeoutMs });
    t.closer.defer(() => http.close());
    await sendTestEvent({ store: t.store, clock: t.clock, http, settings }, 'acme', 'wh_1');
    t.clock.advance(31 * DAY);
    const [fresh] = await insertQueued(t.store, 1, t.clock.now(), 'outbox');
    await housekeeping({ store: t.store, retentionDays: 30 }, t.clock.now());
    const left = await deliveryRows(t.store);
    expect(left.map((x) => x.message_id)).toEqual([fresh]);
    expect(left.some((x) => x.message_id === old)).toBe(false);
    const attempts = await databaseOf(t.store).selectFrom('webhook_attempts').selectAll().execute();
    expect(attempts).toHaveLength(0);
  });
});
