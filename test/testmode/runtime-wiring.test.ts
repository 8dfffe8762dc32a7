import path from 'node:path';
import { expect, it } from 'vitest';
import { createRuntime } from '../../src/cli/runtime.js';
import { seedOrg } from '../support/seed.js';
import { closerPerTest, tempDir } from '../support/cleanup.js';
import { describeDialects } from '../support/dialects.js';
import { testConfig } from '../support/app.js';
import { insertModeMessage } from '../support/test-mode.js';

const DAY = 86_400_000;

/**
 * `mailroom serve|worker` build their worker in createRuntime: the two test-mode settings reach
 * it (issue 27 §5.2). The wiring is the same on both dialects; one SQLite file of its own is enough.
 */
describeDialects('test-mode settings reach the worker (%s)', (dialect, skip) => {
  const closer = closerPerTest();

  it.skipIf(skip || dialect !== 'sqlite')(
    'MAILROOM_SIMULATOR_DELAY_SECONDS=9 spaces delay@ by 3 s; MAILROOM_TEST_RETENTION_DAYS=2 purges at 2 days',
    async () => {
      const dir = tempDir(closer);
      const runtime = await createRuntime(
        testConfig({
          MAILROOM_DATA_DIR: dir,
          MAILROOM_DATABASE_URL: `sqlite:${path.join(dir, 'wiring.db')}`,
          MAILROOM_SIMULATOR_DELAY_SECONDS: '9',
          MAILROOM_TEST_RETENTION_DAYS: '2',
        }),
      );
      closer.defer(() => runtime.close());
      const { store } = runtime;
      await seedOrg(store);
      const worker = runtime.createWorker();
      closer.defer(() => worker.stop(1000));

      const created = Date.now();
      const id = await insertModeMessage(store, undefined, {
        to: ['delay@simulator.mailroom.test'],
        mode: 'test',
        simulated: true,
        createdAt: created,
      });
      expect(await worker.runOnce()).toBe(1);
      const m = await store.messages.get('acme', id);
      // 9 s / 3 = 3 s after the attempt (the default 60 s would be 20 s); the attempt is this test's
      // own a moment after `created`, hence a range rather than one instant.
      const wait = (m?.next_attempt_at ?? 0) - created;
      expect(wait).toBeGreaterThanOrEqual(3000);
      expect(wait).toBeLessThan(9000);
      expect(await store.testInbox.has(id)).toBe(true);

      const old = await insertModeMessage(store, undefined, {
        to: ['ann@example.com'],
        mode: 'test',
        simulated: false,
        createdAt: created - 2 * DAY - 1,
      });
      await worker.maintain(Date.now());
      expect(await store.messages.get('acme', old)).toBeUndefined();
      expect(await store.messages.get('acme', id)).toBeDefined();
    },
  );
});
