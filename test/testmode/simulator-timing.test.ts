import { expect, it } from 'vitest';
import { newWorker } from '../support/delivery.js';
import { tempDir } from '../support/cleanup.js';
import { databaseOf } from '../support/db.js';
import { describeDialects } from '../support/dialects.js';
import { useWebhookStore } from '../support/webhooks/dispatch.js';
import { insertModeMessage, testBlobs, timeline } from '../support/test-mode.js';

/**
 * When the simulator's retries happen: exactly when it asked (Retry-After semantics, no jitter),
 * also for a message whose recipients part ways (settleApart honours Refusal.retryAfterMs).
 */
describeDialects('simulator timing on %s', (dialect, skip) => {
  const t = useWebhookStore(dialect, skip);

  const setup = (delayMs = 60_000) =>
    newWorker(
      {
        store: t.store,
        clock: t.clock,
        dataDir: tempDir(t.closer),
        blobs: testBlobs(t.closer),
        testMode: { simulatorDelayMs: delayMs },
        // Were the jittered schedule used, a retry would land at 30 s ± 20 %, never at +5 s.
        random: () => 0.5,
      },
      t.closer,
    ).worker;

  const nextAttemptAt = async (id: string) =>
    Number(
      (await databaseOf(t.store).selectFrom('messages').select('next_attempt_at').where('id', '=', id).executeTakeFirstOrThrow())
        .next_attempt_at,
    );

  it.skipIf(t.skip)('delay@ with a 9 s delay: retried at +3, +6 and +9 s, then sent and delivered', async () => {
    const worker = setup(9000);
    const created = t.clock.now();
    const id = await insertModeMessage(t.store, undefined, {
      to: ['delay@simulator.mailroom.test'],
      mode: 'live',
      simulated: true,
      createdAt: created,
    });
    const retries: number[] = [];
    for (let i = 0; i < 3; i++) {
      expect(await worker.runOnce()).toBe(1);
      const at = await nextAttemptAt(id);
      retries.push(at - created);
      t.clock.set(at);
    }
    expect(retries).toEqual([3000, 6000, 9000]);
    expect(await worker.runOnce()).toBe(1);
    await worker.runOnce();
    const types = await timeline(t.store, id);
    expect(types.filter((x) => x === 'deferred')).toHaveLength(3);
    expect(types.slice(-2)).toEqual(['sent', 'delivered']);
  });

  it.skipIf(t.skip)('recipients parting ways: softbounce@ retried at exactly +5 s while reject@ is refused', async () => {
    const worker = setup();
    const created = t.clock.now();
    const to = ['softbounce@simulator.mailroom.test', 'reject@simulator.mailroom.test'];
    const id = await insertModeMessage(t.store, undefined, { to, mode: 'test', simulated: true, createdAt: created });
    expect(await worker.runOnce()).toBe(1);
    expect((await t.store.messages.get('acme', id))?.status).toBe('queued');
    expect((await nextAttemptAt(id)) - created).toBe(5000);
    t.clock.advance(5000);
    expect(await worker.runOnce()).toBe(1);
    await worker.runOnce();
    const m = await t.store.messages.get('acme', id);
    expect(m?.status).toBe('delivered');
    // Refused for good beside another recipient: bounced on its own, as a relay's 5xx to one RCPT is (not suppressed).
    expect(await timeline(t.store, id)).toEqual(['queued', 'sending', 'bounced', 'deferred', 'sending', 'sent', 'delivered']);
    expect(await t.store.suppressions.list('acme')).toEqual([]);
  });

  it.skipIf(t.skip)('delivered@ beside softbounce@: sent to one now, to the other 5 s later, both delivered', async () => {
    const worker = setup();
    const created = t.clock.now();
    const to = ['delivered@simulator.mailroom.test', 'softbounce@simulator.mailroom.test'];
    const id = await insertModeMessage(t.store, undefined, { to, mode: 'live', simulated: true, createdAt: created });
    expect(await worker.runOnce()).toBe(1);
    expect((await nextAttemptAt(id)) - created).toBe(5000);
    // The accepted recipient's delivery waits for the message to settle (its `sent` comes first).
    await worker.runOnce();
    expect(await timeline(t.store, id)).toEqual(['queued', 'sending', 'sent', 'deferred']);
    t.clock.advance(5000);
    expect(await worker.runOnce()).toBe(1);
    await worker.runOnce();
    expect(await timeline(t.store, id)).toEqual([
      'queued',
      'sending',
      'sent',
      'deferred',
      'sending',
      'sent',
      'delivered',
      'delivered',
    ]);
    expect((await t.store.messages.get('acme', id))?.status).toBe('delivered');
  });
});
