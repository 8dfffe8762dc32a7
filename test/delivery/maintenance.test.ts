import { expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.js';
import { diskBlobStore } from '../../src/blobs/disk.js';
import { LocalPacer } from '../../src/delivery/pacing.js';
import { DeliveryWorker } from '../../src/delivery/worker.js';
import { idempotencyKeys, messageIds, setContent, setMessageFields } from '../support/db.js';
import { captureLogger, deliveryHarness, insertQueued, send } from '../support/delivery.js';
import { tempDir } from '../support/cleanup.js';
import { seedOrg } from '../support/seed.js';
import { describeDialects } from '../support/dialects.js';

const DAY = 86_400_000;

describeDialects('worker housekeeping on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)('purges messages past retention with their blobs, expired idempotency keys and expired uploads', async () => {
    const t = await h.app();
    await seedOrg(t.store);
    const blobs = diskBlobStore({ root: tempDir(h.closer), baseUrl: 'http://mailroom.test', secret: 's' });
    const worker = new DeliveryWorker({
      store: t.store,
      clock: t.clock,
      dataDir: tempDir(h.closer),
      pacer: new LocalPacer(t.clock),
      metrics: createMetrics(),
      logger: captureLogger(),
      retentionDays: 30,
      blobs,
    });
    h.closer.defer(() => worker.stop(1000));

    const start = t.clock.now();
    const [old] = await insertQueued(t.store, 1, start - 31 * DAY, 'outbox');
    await setMessageFields(t.store, old ?? '', { status: 'sent' });
    await blobs.put('acme/up_old', Buffer.from('bytes'), undefined);
    await setContent(t.store, old ?? '', { attachments: JSON.stringify([{ blob_key: 'acme/up_old', filename: 'a.txt' }]) });
    const recent = await send(t);

    await t.store.transaction((tx) =>
      tx.idempotency.put('acme', 'old-key', 'h', { status: 202, headers: {}, body: '{}' }, start - 2 * DAY, DAY),
    );
    await t.store.transaction((tx) =>
      tx.idempotency.put('acme', 'new-key', 'h', { status: 202, headers: {}, body: '{}' }, start, DAY),
    );
    await t.store.uploads.insert({
      id: 'up_gone',
      org_id: 'acme',
      filename: 'x.txt',
      content_type: null,
      size: 3,
      blob_key: 'acme/up_gone',
      key_type: 'private',
      created_at: start - 2 * DAY,
      url_expires_at: start - 2 * DAY,
      expires_at: start - DAY,
    });
    await blobs.put('acme/up_gone', Buffer.from('abc'), undefined);

    await worker.maintain(start);

    expect(await messageIds(t.store)).toEqual([recent]);
    expect(await t.store.messages.events(old ?? '')).toEqual([]);
    expect(await t.store.messages.content(old ?? '')).toBeUndefined();
    expect(await blobs.size('acme/up_old')).toBeUndefined();
    expect(await idempotencyKeys(t.store)).toEqual(['new-key']);
    expect(await t.store.uploads.byId('up_gone')).toBeUndefined();
    expect(await blobs.size('acme/up_gone')).toBeUndefined();
  });
});
