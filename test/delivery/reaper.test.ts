import { expect, it, vi } from 'vitest';
import { deliveryHarness, insertQueued, row } from '../support/delivery.js';
import { eventTypes } from '../support/stored.js';
import { waitFor } from '../support/smtp-sink.js';
import { describeDialects } from '../support/dialects.js';
import { watchTransactions } from '../support/watched-store.js';

const LEASE_MS = 60_000;

/** The reaper runs on timers of its own, not from the claim loop (issue 17 §3). */
describeDialects("the reaper's own schedule on %s", (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)(
    "an idle worker (a 10 s poll) takes back a dead worker's claim on the reaper's timer and sends it at once",
    async () => {
      const { t, sink } = await h.smtpApp();
      const watched = watchTransactions(t.store);
      const { worker, logger } = h.worker(t, {
        store: watched.store,
        options: { leaseMs: LEASE_MS, pollMs: 10_000, reapEveryMs: 50 },
      });
      worker.start();
      // Once the first claim has come back (empty), the claim loop sleeps for its 10 s poll.
      await waitFor(() => watched.claims() >= 1, 5_000, 'the first claim');

      // Another worker claims a message and dies mid-attempt; its lease expires.
      const [id] = await insertQueued(t.store, 1, t.clock.now());
      expect(await t.store.transaction((tx) => tx.queue.claim(t.clock.now(), 10, LEASE_MS))).toHaveLength(1);
      t.clock.advance(LEASE_MS + 1);

      // Within a few reaper ticks, far inside the poll: requeued, and the requeue woke the claim loop.
      await waitFor(async () => (await row(t.store, id!)).status === 'sent', 3_000, 'the reaped message to be sent');
      expect(sink.received).toHaveLength(1);
      expect(await eventTypes(t.store, id!)).toEqual(['queued', 'sending', 'queued', 'sending', 'sent']);
      expect(logger.entries).toContainEqual(
        expect.objectContaining({ level: 'warn', msg: 'expired leases returned to the queue', obj: { reaped: 1 } }),
      );
    },
  );

  it.skipIf(skip)("stop ends the reaper's timer: an expired lease after the stop stays as it is", async () => {
    const { t } = await h.smtpApp();
    const watched = watchTransactions(t.store);
    const { worker, logger } = h.worker(t, { store: watched.store, options: { leaseMs: LEASE_MS, reapEveryMs: 20 } });
    // The reaper's timer on the test's clock (it alone uses setInterval while nothing is being sent).
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      // Reaps take no options (claims and housekeeping pass durable: false): counted as they start.
      const reaps = () => watched.startedOf('durable');
      const reapsDone = () => watched.settled.filter((s) => s.kind === 'durable').length;
      worker.start();
      // The reap at start, then one on the timer once it is done (a tick during a run is skipped).
      await waitFor(() => reapsDone() >= 1, 5_000, 'the reap at start');
      await vi.advanceTimersByTimeAsync(20);
      await waitFor(() => reaps() >= 2, 5_000, 'a reap on the timer');
      await worker.stop(1_000);
      const startedBefore = watched.started;

      const [id] = await insertQueued(t.store, 1, t.clock.now());
      expect(await t.store.transaction((tx) => tx.queue.claim(t.clock.now(), 10, LEASE_MS))).toHaveLength(1);
      t.clock.advance(LEASE_MS + 1);
      // Ten reaper periods and more: nothing starts, nothing takes the message back.
      await vi.advanceTimersByTimeAsync(200);
      expect(watched.started).toBe(startedBefore);
      expect((await row(t.store, id!)).status).toBe('sending');
      expect(logger.entries.filter((e) => e.msg === 'expired leases returned to the queue')).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });
});
