import { expect, it } from 'vitest';
import { newWorker } from '../support/delivery.js';
import { tempDir } from '../support/cleanup.js';
import { describeDialects } from '../support/dialects.js';
import { useWebhookStore } from '../support/webhooks/dispatch.js';
import { insertModeMessage, testBlobs } from '../support/test-mode.js';

const DAY = 86_400_000;

/**
 * Test-mode messages go after MAILROOM_TEST_RETENTION_DAYS (issue 27 §5.1), never later than
 * the live retention, with their captured bytes; live messages of the same age stay.
 */
describeDialects('test-mode retention on %s', (dialect, skip) => {
  const t = useWebhookStore(dialect, skip);

  const setup = (testRetentionDays: number, retentionDays = 30) => {
    const blobs = testBlobs(t.closer);
    const { worker } = newWorker(
      {
        store: t.store,
        clock: t.clock,
        dataDir: tempDir(t.closer),
        blobs,
        retentionDays,
        testMode: { simulatorDelayMs: 60_000, testRetentionDays },
      },
      t.closer,
    );
    return { worker, blobs };
  };

  /** A captured test message and a live simulator message, both created now and settled. */
  const both = async (worker: ReturnType<typeof setup>['worker']) => {
    const created = t.clock.now();
    const test = await insertModeMessage(t.store, undefined, {
      to: ['ann@example.com'],
      mode: 'test',
      simulated: false,
      createdAt: created,
    });
    const live = await insertModeMessage(t.store, undefined, {
      to: ['delivered@simulator.mailroom.test'],
      mode: 'live',
      simulated: true,
      createdAt: created,
    });
    await worker.runOnce();
    await worker.runOnce();
    return { test, live };
  };

  for (const days of [7, 2]) {
    it.skipIf(t.skip)(
      `MAILROOM_TEST_RETENTION_DAYS=${days}: purged at ${days} d + 1 ms with its inbox blob; live kept`,
      async () => {
        const { worker, blobs } = setup(days);
        const { test, live } = await both(worker);
        const captured = await t.store.testInbox.get('acme', test);
        expect(captured).toBeDefined();
        const key = captured?.blob_key ?? '';
        expect(await blobs.size(key)).toBeGreaterThan(0);

        t.clock.advance(days * DAY);
        await worker.maintain(t.clock.now());
        expect(await t.store.messages.get('acme', test)).toBeDefined();

        t.clock.advance(1);
        await worker.maintain(t.clock.now());
        expect(await t.store.messages.get('acme', test)).toBeUndefined();
        expect(await t.store.testInbox.get('acme', test)).toBeUndefined();
        expect(await blobs.size(key)).toBeUndefined();
        expect((await t.store.messages.get('acme', live))?.status).toBe('delivered');
      },
    );
  }

  it.skipIf(t.skip)('a test retention longer than the live one is cut to the live one', async () => {
    const { worker, blobs } = setup(7, 1);
    const { test, live } = await both(worker);
    const key = (await t.store.testInbox.get('acme', test))?.blob_key ?? '';
    t.clock.advance(DAY + 1);
    await worker.maintain(t.clock.now());
    expect(await t.store.messages.get('acme', test)).toBeUndefined();
    expect(await t.store.messages.get('acme', live)).toBeUndefined();
    expect(await blobs.size(key)).toBeUndefined();
  });
});
