import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { openStore } from '../../src/storage/store.js';
import { Closer, tempDir } from '../support/cleanup.js';
import { privateClusterPossible, startPrivateCluster } from '../support/private-pg.js';
import { startSink, waitFor } from '../support/smtp-sink.js';
import { insertQueued, newWorker, seedSmtpOrg, smtpService } from '../support/delivery.js';
import { watchTransactions } from '../support/watched-store.js';

const possible = privateClusterPossible();

/**
 * Issue 25 §1/§3: a message whose outcome cannot be written because the database went away
 * while it was being sent is settled as soon as the database is back, not after its lease (the
 * clock here never moves, so the lease never ends: only the retried write can settle it).
 * PostgreSQL only: a private cluster is stopped while the relay holds the message's DATA.
 */
describe('an outcome written while the database is away', () => {
  const closer = new Closer();
  afterAll(() => closer.closeAll());

  it.skipIf(!possible)(
    'is written once the database is back: sent, once, without waiting for the lease',
    { timeout: 120_000 },
    async () => {
      const cluster = await startPrivateCluster();
      closer.defer(() => cluster.destroy());
      let stopped = false;
      const sink = await startSink(
        {
          // The relay has the message: the database goes away before the worker can record it.
          data: () => {
            if (!stopped) {
              stopped = true;
              cluster.stop('fast');
            }
            return undefined;
          },
        },
        closer,
      );
      const clock = new ManualClock(Date.now());
      const store = await openStore(`${cluster.url}?schema=outcomes`, { clock });
      closer.defer(() => store.close());
      await seedSmtpOrg(store, smtpService(sink.port));
      const [id] = await insertQueued(store, 1, clock.now());
      const watched = watchTransactions(store);
      const { worker, logger } = newWorker(
        { store: watched.store, clock, dataDir: tempDir(closer), options: { leaseMs: 300_000 } },
        closer,
      );
      worker.start();

      await waitFor(() => sink.received.length === 1, 30_000, 'the relay to receive the message');
      // The outcome write (a background transaction) is refused, waits and is refused again: it is
      // being retried, not merely late, when the database comes back.
      await waitFor(() => watched.refused('background') >= 2, 30_000, 'the outcome write to be refused twice');
      cluster.start();
      // The test's own reads may meet the pool's connect cool-down (up to 2 s after the last
      // refused connect): those polls count as not yet.
      await waitFor(
        async () => (await store.messages.get('acme', id ?? '').catch(() => undefined))?.status === 'sent',
        30_000,
        'the message to be recorded sent',
      );
      expect(sink.received).toHaveLength(1);
      // One line for the pause of claims, no error with a stack for each failed poll.
      expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.msg)).toEqual([]);
      expect(logger.entries.filter((e) => e.msg.startsWith('claiming paused'))).toHaveLength(1);
      expect(logger.entries.filter((e) => e.msg.startsWith('claiming resumed'))).toHaveLength(1);
    },
  );
});
