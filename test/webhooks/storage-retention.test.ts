import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { housekeeping } from '../../src/delivery/housekeeping.js';
import { insertQueued } from '../delivery/harness.js';
import { Closer } from '../support/cleanup.js';
import { databaseOf } from '../support/db.js';
import { seedOrg } from '../support/seed.js';
import { DIALECTS, freshStore, postgresAvailable, type TestStore } from '../support/stores.js';
import { createWebhookHttp } from '../../src/webhooks/http-post.js';
import { sendTestEvent } from '../../src/webhooks/test-event.js';
import { deliveryRows, insertEndpoint, nowClock, startReceiver, testDispatcher, testSecret, testSettings } from './support.js';

const pgUp = await postgresAvailable();
const SECRET = testSecret(3);
const DAY = 86_400_000;

describe.each(DIALECTS)('webhook deliveries and retention on %s', (dialect) => {
  const skip = dialect === 'postgres' && !pgUp;
  let closer: Closer;
  let t: TestStore;
  beforeEach(async () => {
    closer = new Closer();
    if (skip) return;
    t = await freshStore(dialect);
    closer.defer(() => t.cleanup());
    nowClock(t.clock);
    await seedOrg(t.store);
  });
  afterEach(async () => {
    await closer.closeAll();
  });

  it.skipIf(skip)('deliveries and their attempts go with their message; test deliveries go by age', async () => {
    const r = await startReceiver([SECRET], closer);
    await insertEndpoint(t.store, { id: 'wh_1', url: r.url, secret: SECRET }, t.clock.now());
    const [old] = await insertQueued(t.store, 1, t.clock.now(), 'outbox');
    const d = testDispatcher(t.store, t.clock, closer);
    await d.pump();
    const settings = testSettings();
    const http = createWebhookHttp({ policy: settings.urlPolicy, timeoutMs: settings.attemptTimeoutMs });
    closer.defer(() => http.close());
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
