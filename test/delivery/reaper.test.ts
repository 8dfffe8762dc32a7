import { expect, it } from 'vitest';
import { deliveryHarness, insertQueued, row } from '../support/delivery.js';
import { eventTypes } from '../support/stored.js';
import { waitFor } from '../support/smtp-sink.js';
import { describeDialects } from '../support/dialects.js';

const LEASE_MS = 60_000;

/** The reaper runs on timers of its own, not from the claim loop (issue 17 §3). */
describeDialects('the reaper\'s own schedule on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)('an idle worker (a 10 s poll) takes back a dead worker\'s claim on the reaper\'s timer and sends it at once', async () => {
    const { t, sink } = await h.smtpApp();
    const { worker, logger } = h.worker(t, { options: { leaseMs: LEASE_MS, pollMs: 10_000, reapEveryMs: 50 } });
    worker.start();
    // The first claim found nothing: the claim loop now sleeps for its 10 s poll.
    await new Promise((r) => setTimeout(r, 200));

    // Another worker claims a message and dies mid-attempt; its lease expires.
    const [id] = await insertQueued(t.store, 1, t.clock.now());
    expect(await t.store.transaction((tx) => tx.queue.claim(t.clock.now(), 10, LEASE_MS))).toHaveLength(1);
    t.clock.advance(LEASE_MS + 1);

    // Within a few reaper ticks, far inside the poll: requeued, and the requeue woke the claim loop.
    await waitFor(async () => (await row(t.store, id!)).status === 'sent', 3_000, 'the reaped message to be sent');
    expect(sink.received).toHaveLength(1);
    expect(await eventTypes(t.store, id!)).toEqual(['queued', 'sending', 'queued', 'sending', 'sent']);
    expect(logger.entries).toContainEqual(expect.objectContaining({ level: 'warn', msg: 'expired leases returned to the queue', obj: { reaped: 1 } }));
  });

  it.skipIf(skip)('stop ends the reaper\'s timer: an expired lease after the stop stays as it is', async () => {
    const { t } = await h.smtpApp();
    const { worker, logger } = h.worker(t, { options: { leaseMs: LEASE_MS, reapEveryMs: 20 } });
    worker.start();
    await new Promise((r) => setTimeout(r, 100));
    await worker.stop(1_000);

    const [id] = await insertQueued(t.store, 1, t.clock.now());
    expect(await t.store.transaction((tx) => tx.queue.claim(t.clock.now(), 10, LEASE_MS))).toHaveLength(1);
    t.clock.advance(LEASE_MS + 1);
    // Ten reaper periods and more: nothing takes the message back.
    await new Promise((r) => setTimeout(r, 300));
    expect((await row(t.store, id!)).status).toBe('sending');
    expect(logger.entries.filter((e) => e.msg === 'expired leases returned to the queue')).toEqual([]);
  });
});
