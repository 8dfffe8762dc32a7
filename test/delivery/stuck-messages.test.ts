import { expect, it, vi } from 'vitest';
import type { Pacer } from '../../src/delivery/pacing.js';
import { DEFAULT_RETRY, reapGiveUpReason, type RetryPolicy } from '../../src/delivery/retry.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { deleteContent, setContent } from '../support/db.js';
import { deliveryHarness, insertQueued, row, seedSmtpOrg, send, smtpService } from '../support/delivery.js';
import { eventTypes } from '../support/stored.js';
import { waitFor } from '../support/smtp-sink.js';
import { fromDatabase } from '../../src/errors/storage-trouble.js';
import { describeDialects } from '../support/dialects.js';

/** A pacer whose store (Redis, say) is down. */
const brokenPacer: Pacer = {
  acquire: () => Promise.reject(new Error('pacing store unavailable: connect ECONNREFUSED 127.0.0.1:6379')),
};

/** Three attempts, fixed 30 s apart: few steps, each due at a known time. */
const SHORT: RetryPolicy = { ...DEFAULT_RETRY, maxAttempts: 3, jitter: 0 };

/**
 * Messages that must not stay `sending` or go round between `queued` and `sending` forever:
 * unreadable content, a batch whose context cannot be read, a failing pacer, attempts that
 * keep dying with their worker.
 */
describeDialects('messages that cannot be sent end somewhere on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)('an unreadable stored content fails its own message only: the rest of the batch is sent', async () => {
    const { t, sink } = await h.smtpApp();
    const healthy = await send(t);
    const notJson = await send(t);
    const noContent = await send(t);
    await setContent(t.store, notJson, { content: '{"broken":' });
    // A missing content row: the claim reads it as `{}`, which has no recipients.
    await deleteContent(t.store, noContent);
    const { worker, logger } = h.worker(t);

    expect(await worker.runOnce()).toBe(3);

    expect((await row(t.store, healthy)).status).toBe('sent');
    expect(sink.received).toHaveLength(1);
    for (const [id, why] of [
      [notJson, /not valid JSON/],
      [noContent, /no valid "to" list/],
    ] as const) {
      const m = await row(t.store, id);
      expect(m.status).toBe('failed');
      expect(m.lease_until).toBeNull();
      expect(m.last_error).toMatch(why);
      expect(m.last_error).toMatch(/can never be sent/);
      expect(await eventTypes(t.store, id)).toEqual(['queued', 'sending', 'failed']);
      expect(logger.entries).toContainEqual(
        expect.objectContaining({ msg: 'delivery attempt', obj: expect.objectContaining({ message_id: id, outcome: 'failed' }) }),
      );
    }
  });

  it.skipIf(skip)(
    'the running worker too: the healthy message is sent, the unreadable one failed, nothing stays sending',
    async () => {
      const { t, sink } = await h.smtpApp();
      const healthy = await send(t);
      const bad = await send(t);
      await setContent(t.store, bad, { content: '{"broken":' });
      const { worker } = h.worker(t, { options: { renewEveryMs: 20 } });

      worker.start();
      // The transport thread starts first: seconds on a loaded machine.
      await waitFor(async () => (await row(t.store, healthy)).status === 'sent', 15_000, 'the healthy message to be sent');
      await waitFor(async () => (await row(t.store, bad)).status === 'failed', 5_000, 'the unreadable message to fail');
      expect(sink.received).toHaveLength(1);
    },
  );

  it.skipIf(skip)(
    'the batch context cannot be read (a database error): the batch goes back to the queue and is sent on the next round',
    async () => {
      const { t, sink } = await h.smtpApp();
      const ids = [await send(t), await send(t)];
      const lookup = vi
        .spyOn(t.store.suppressions, 'findAmong')
        .mockRejectedValueOnce(fromDatabase(new Error('Connection terminated unexpectedly')));
      const { worker, logger } = h.worker(t, { options: { renewEveryMs: 20 } });

      worker.start();
      await waitFor(
        async () => (await Promise.all(ids.map((id) => row(t.store, id)))).every((m) => m.status === 'sent'),
        5_000,
        'both messages sent',
      );
      expect(lookup).toHaveBeenCalledTimes(2);
      expect(sink.received).toHaveLength(2);
      for (const id of ids) {
        // Given back untouched: the round that could not start is not counted as an attempt.
        expect((await row(t.store, id)).attempts).toBe(1);
        const events = await t.store.messages.events(id);
        expect(events.map((e) => e.type)).toEqual(['queued', 'sending', 'queued', 'sending', 'sent']);
        expect(events[2]).toMatchObject({ type: 'queued', detail: { reason: 'context_unavailable' } });
      }
      // A lost connection is the database going away: one warning for the pause, not an error.
      expect(logger.entries).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          msg: expect.stringMatching(/^claiming paused/),
          obj: expect.objectContaining({ messages: 2, released: true }),
        }),
      );
    },
  );

  it.skipIf(skip)(
    'runOnce: a batch context that cannot be read rejects, and the batch is queued again, not left sending',
    async () => {
      const { t } = await h.smtpApp();
      const id = await send(t);
      vi.spyOn(t.store.services, 'get').mockRejectedValueOnce(fromDatabase(new Error('Connection terminated unexpectedly')));
      const { worker } = h.worker(t);

      await expect(worker.runOnce()).rejects.toThrow(/Connection terminated/);
      const m = await row(t.store, id);
      expect(m.status).toBe('queued');
      expect(m.lease_until).toBeNull();
      expect(m.attempts).toBe(0);
      expect(await worker.runOnce()).toBe(1);
      expect((await row(t.store, id)).status).toBe('sent');
    },
  );

  it.skipIf(skip)(
    "a transport that cannot be built holds its service's messages (held_service_error), with the reason",
    async () => {
      const t = await h.app();
      await seedSmtpOrg(t.store, smtpService(1));
      const id = await send(t);
      const { worker } = h.worker(t, {
        transports: {
          smtp: () => {
            throw new Error('transport factory broke');
          },
        },
      });

      expect(await worker.runOnce()).toBe(1);
      const m = await row(t.store, id);
      expect(m.status).toBe('held_service_error');
      expect(m.last_error).toMatch(/cannot be built from its settings: transport factory broke/);
    },
  );

  it.skipIf(skip)('an attempt that fails outside the transport is logged with its message and service', async () => {
    const t = await h.app();
    await seedSmtpOrg(t.store, smtpService(1));
    const id = await send(t);
    await setContent(t.store, id, { content: '{"broken":' });
    // Recording the unreadable message's failure breaks (here: its metric), outside any transport.
    const metrics = createMetrics();
    metrics.failed.inc = () => {
      throw new Error('metrics broke');
    };
    const { worker, logger } = h.worker(t, { metrics });

    expect(await worker.runOnce()).toBe(1);
    const entry = logger.entries.find((e) => e.msg.startsWith('delivery failed unexpectedly'));
    expect(entry?.level).toBe('error');
    expect(entry?.obj).toMatchObject({ message_id: id, org_id: 'acme', service_id: 'smtp' });
  });

  it.skipIf(skip)(
    'a failing pacer fails the attempt like any temporary error: deferred, then failed at the attempt limit',
    async () => {
      const t = await h.app();
      const sink = await h.sink(t);
      await seedSmtpOrg(t.store, smtpService(sink.port, { max_per_second: 10 }));
      const id = await send(t);
      const { worker, logger } = h.worker(t, { pacer: brokenPacer, retry: SHORT });

      for (let attempt = 1; attempt <= SHORT.maxAttempts; attempt++) {
        expect(await worker.runOnce()).toBe(1);
        const m = await row(t.store, id);
        expect(m.attempts).toBe(attempt);
        expect(m.last_error).toMatch(/pacing store unavailable/);
        if (attempt < SHORT.maxAttempts) {
          expect(m.status).toBe('queued');
          t.clock.set(m.next_attempt_at ?? 0);
        }
      }
      expect((await row(t.store, id)).status).toBe('failed');
      expect(await eventTypes(t.store, id)).toEqual([
        'queued',
        'sending',
        'deferred',
        'sending',
        'deferred',
        'sending',
        'failed',
      ]);
      expect(sink.dataAttempts).toHaveLength(0);
      expect(logger.entries.filter((e) => e.msg.startsWith('delivery failed unexpectedly'))).toEqual([]);
    },
  );

  it.skipIf(skip)(
    'a message whose attempts keep dying with their worker is failed by the reaper at the attempt limit, not requeued',
    async () => {
      const { t, sink } = await h.smtpApp();
      const [id] = await insertQueued(t.store, 1, t.clock.now());
      const leaseMs = 60_000;
      // A worker that claims the message and dies mid-attempt, leaving its lease to expire.
      const claimAndDie = () => t.store.transaction((tx) => tx.queue.claim(t.clock.now(), 10, leaseMs));
      for (let attempt = 1; attempt < SHORT.maxAttempts; attempt++) {
        expect(await claimAndDie()).toHaveLength(1);
        t.clock.advance(leaseMs + 1);
        expect(
          await t.store.transaction((tx) =>
            tx.queue.reapExpired(t.clock.now(), (attempts, createdAt) =>
              reapGiveUpReason(SHORT, attempts, createdAt, t.clock.now()),
            ),
          ),
        ).toEqual({ requeued: 1, failed: [] });
      }
      expect(await claimAndDie()).toHaveLength(1);
      t.clock.advance(leaseMs + 1);

      // The last attempt died too: the next worker's reaper fails it instead of requeuing it.
      const { worker, logger, metrics } = h.worker(t, { retry: SHORT, options: { leaseMs } });
      expect(await worker.runOnce()).toBe(0);
      expect(sink.dataAttempts).toHaveLength(0);
      const m = await row(t.store, id!);
      expect(m.status).toBe('failed');
      expect(m.attempts).toBe(SHORT.maxAttempts);
      expect(m.lease_until).toBeNull();
      expect(m.next_attempt_at).toBeNull();
      const events = await t.store.messages.events(id!);
      expect(events.at(-1)).toMatchObject({
        type: 'failed',
        detail: {
          reason: expect.stringMatching(/^gave up after 3 attempts: its last attempt never finished \(the lease expired/),
        },
      });
      expect(logger.entries).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          obj: expect.objectContaining({ message_id: id, service_id: 'smtp', outcome: 'failed' }),
        }),
      );
      expect(await metrics.registry.getSingleMetricAsString('mailroom_messages_failed_total')).toMatch(/service="smtp"} 1/);
    },
  );

  it.skipIf(skip)('a message past its maximum age whose lease expired is failed by the reaper, not requeued', async () => {
    const { t, sink } = await h.smtpApp();
    const leaseMs = 60_000;
    // Accepted 23 h 59 min 30 s ago; its attempt's lease expires past the 24 h it may wait.
    const [id] = await insertQueued(t.store, 1, t.clock.now() - DEFAULT_RETRY.maxAgeMs + 30_000);
    expect(await t.store.transaction((tx) => tx.queue.claim(t.clock.now(), 10, leaseMs))).toHaveLength(1);
    t.clock.advance(leaseMs + 1);

    const { worker } = h.worker(t, { options: { leaseMs } });
    expect(await worker.runOnce()).toBe(0);
    expect(sink.dataAttempts).toHaveLength(0);
    const m = await row(t.store, id!);
    expect(m.status).toBe('failed');
    expect(m.last_error).toMatch(/^gave up: the message is older than 24 h and its last attempt never finished/);
  });
});
