import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/storage/store.js';
import { seedOrg } from '../support/seed.js';
import { countEvents, statusCounts } from '../support/db.js';
import { freshStore, postgresAvailable } from '../support/stores.js';
import { Closer, tempDir } from '../support/cleanup.js';
import { CONTACT_TEMPLATE, insertQueued, newWorker, smtpService } from '../support/delivery.js';
import { startSink } from '../support/smtp-sink.js';

const pgUp = await postgresAvailable();

describe('two workers on one PostgreSQL database', () => {
  let closer: Closer;
  beforeEach(() => {
    closer = new Closer();
  });
  afterEach(async () => {
    await closer.closeAll();
  });

  it.skipIf(!pgUp)('1,000 messages: each received exactly once, all sent', { timeout: 60_000 }, async () => {
    const t = await freshStore('postgres');
    closer.defer(() => t.cleanup());
    const sink = await startSink({}, closer);
    await seedOrg(t.store, { credits: 5000, services: [smtpService(sink.port)], templates: [CONTACT_TEMPLATE] });
    const ids = await insertQueued(t.store, 1000, t.clock.now());
    expect((await statusCounts(t.store)).queued).toBe(1000);

    // Each worker has its own connection pool, as two processes would.
    const stores = await Promise.all([1, 2].map(() => openStore(t.database.url, { clock: t.clock })));
    for (const s of stores) closer.defer(() => s.close());
    const dataDir = tempDir(closer);
    const workers = stores.map(
      (store) => newWorker({ store, clock: t.clock, dataDir, options: { batchSize: 25 } }, closer).worker,
    );

    const handled = [0, 0];
    await Promise.all(
      workers.map(async (w, i) => {
        for (;;) {
          const n = await w.runOnce();
          if (n === 0) break;
          handled[i]! += n;
        }
      }),
    );

    expect(handled[0]! + handled[1]!).toBe(1000);
    // Both really took part (claims interleaved), or this test proves nothing about double claiming.
    expect(handled[0]).toBeGreaterThan(0);
    expect(handled[1]).toBeGreaterThan(0);

    const received = sink.received.map((r) => r.messageId);
    expect(received).toHaveLength(1000);
    expect(new Set(received).size).toBe(1000);
    expect(new Set(received)).toEqual(new Set(ids.map((id) => `<${id}@mailroom.test>`)));
    expect(await statusCounts(t.store)).toEqual({ sent: 1000 });
    // One claim per message: every message has exactly one `sending` event.
    expect(await countEvents(t.store, 'sending')).toBe(1000);
  });
});
