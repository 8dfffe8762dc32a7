import { expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import type { KeyMode } from '../../src/domain/types.js';
import { newWorker } from '../support/delivery.js';
import { tempDir } from '../support/cleanup.js';
import { describeDialects } from '../support/dialects.js';
import { insertEndpoint, testDispatcher, useWebhookStore } from '../support/webhooks/dispatch.js';
import { startReceiver, testSecret } from '../support/webhooks/receiver.js';
import { insertModeMessage, keepingComposer, refusingTransports, testBlobs, timeline } from '../support/test-mode.js';

const SECRET = testSecret(27);
const DELAY_MS = 9000;

interface Case {
  local: string;
  /** Clock steps (ms) between worker rounds after the first, until the message is settled. */
  steps: number[];
  status: string;
  events: string[];
  suppression?: 'hard_bounce' | 'complaint';
}

const CASES: Case[] = [
  { local: 'delivered', steps: [], status: 'delivered', events: ['queued', 'sending', 'sent', 'delivered'] },
  { local: 'bounce', steps: [], status: 'bounced', events: ['queued', 'sending', 'sent', 'bounced'], suppression: 'hard_bounce' },
  {
    local: 'softbounce',
    steps: [5000],
    status: 'delivered',
    events: ['queued', 'sending', 'deferred', 'sending', 'sent', 'delivered'],
  },
  {
    local: 'complaint',
    steps: [],
    status: 'complained',
    events: ['queued', 'sending', 'sent', 'delivered', 'complained'],
    suppression: 'complaint',
  },
  {
    local: 'delay',
    steps: [3000, 3000, 3000],
    status: 'delivered',
    events: ['queued', 'sending', 'deferred', 'sending', 'deferred', 'sending', 'deferred', 'sending', 'sent', 'delivered'],
  },
  { local: 'reject', steps: [], status: 'failed', events: ['queued', 'sending', 'failed'] },
];

const MODES: Array<{ mode: KeyMode; label: string }> = [
  { mode: 'live', label: 'a live key' },
  { mode: 'test', label: 'a test key' },
];

describeDialects('the simulator addresses on %s', (dialect, skip) => {
  const t = useWebhookStore(dialect, skip);

  for (const { mode, label } of MODES) {
    for (const c of CASES) {
      it.skipIf(t.skip)(`${c.local}@ with ${label}: ${c.events.slice(2).join(' → ')}, webhooks signed and in order`, async () => {
        const receiver = await startReceiver([SECRET], t.closer);
        await insertEndpoint(t.store, { id: 'wh_sim', url: receiver.url, secret: SECRET }, t.clock.now());
        const dispatcher = testDispatcher(t.store, t.clock, t.closer);
        const calls: string[] = [];
        const composer = keepingComposer();
        const blobs = testBlobs(t.closer);
        const { worker, metrics } = newWorker(
          {
            store: t.store,
            clock: t.clock,
            dataDir: tempDir(t.closer),
            transports: refusingTransports(calls),
            blobs,
            testMode: { simulatorDelayMs: DELAY_MS, compose: composer.compose },
          },
          t.closer,
        );
        const credits = (await t.store.credits.position('acme')).credits;
        const address = `${c.local}+run1@simulator.mailroom.test`;
        const id = await insertModeMessage(t.store, undefined, {
          to: [address],
          mode,
          simulated: true,
          createdAt: t.clock.now(),
        });

        expect(await worker.runOnce()).toBe(1);
        for (const step of c.steps) {
          // Not a millisecond early: the retry is exactly when the simulator said.
          t.clock.advance(step - 1);
          expect(await worker.runOnce()).toBe(0);
          t.clock.advance(1);
          expect(await worker.runOnce()).toBe(1);
        }
        // The simulator's events are recorded by the ticker after the buffered `sent` write.
        await worker.runOnce();

        expect((await t.store.messages.get('acme', id))?.status).toBe(c.status);
        expect(await timeline(t.store, id)).toEqual(c.events);
        expect(calls).toEqual([]);
        expect((await t.store.credits.position('acme')).credits).toBe(credits);

        const suppressions = await t.store.suppressions.list('acme');
        expect(suppressions.map((s) => [s.email, s.reason])).toEqual(
          c.suppression === undefined ? [] : [[address, c.suppression]],
        );

        // The events after `sent` are the simulator's, recorded through the providers' path.
        const sentAt = c.events.indexOf('sent');
        const after = sentAt === -1 ? [] : c.events.slice(sentAt + 1);
        const counted = await metrics.registry.getSingleMetricAsString('mailroom_provider_events_total');
        if (after.length > 0) expect(counted).toContain(`source="simulator",outcome="recorded"} ${after.length}`);
        else expect(counted).not.toContain('source="simulator"');

        // Test mode: captured once (retries skip it), the composed bytes as stored.
        const captured = await t.store.testInbox.get('acme', id);
        if (mode === 'test') {
          expect(captured).toMatchObject({ message_id: id, template_id: 'contact', from_addr: 'noreply@acme.test' });
          expect(composer.composed).toHaveLength(1);
          const bytes = composer.composed[0]?.bytes ?? Buffer.alloc(0);
          expect((await blobs.get(captured?.blob_key ?? '')).equals(bytes)).toBe(true);
          expect(bytes.toString('latin1')).toContain('\r\nSubject: Welcome aboard\r\n');
          expect(captured).toMatchObject({ size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
        } else {
          expect(captured).toBeUndefined();
          expect(composer.composed).toHaveLength(0);
        }

        await dispatcher.pump();
        expect(receiver.received.every((r) => r.verifiedWith.length === 1)).toBe(true);
        type Body = {
          type: string;
          data: { sequence: number; message_id: string; mode: string; details?: { simulated?: boolean } };
        };
        const bodies = receiver.received.map((r) => r.payload as Body);
        expect(bodies.every((b) => b.data.mode === mode && b.data.details?.simulated === true)).toBe(true);
        const ordered = [...bodies].sort((a, b) => a.data.sequence - b.data.sequence);
        expect(ordered.map((b) => b.type)).toEqual(c.events.map((e) => `message.${e}`));
        expect(ordered.map((b) => b.data.sequence)).toEqual(c.events.map((_, i) => i + 1));
        expect(new Set(bodies.map((b) => b.data.message_id))).toEqual(new Set([id]));
      });
    }
  }

  it.skipIf(t.skip)(
    'a second bounce@ send after the first one suppressed it still bounces (the simulator is exempt, D4)',
    async () => {
      const { worker } = newWorker(
        { store: t.store, clock: t.clock, dataDir: tempDir(t.closer), blobs: testBlobs(t.closer) },
        t.closer,
      );
      const address = 'bounce@simulator.mailroom.test';
      /** Sends to bounce@ and runs the worker until the bounce is recorded (hand-off, then the simulator's event). */
      const bounceOnce = async () => {
        const id = await insertModeMessage(t.store, undefined, {
          to: [address],
          mode: 'live',
          simulated: true,
          createdAt: t.clock.now(),
        });
        await worker.runOnce();
        await worker.runOnce();
        expect((await t.store.messages.get('acme', id))?.status).toBe('bounced');
        return id;
      };
      await bounceOnce();
      expect((await t.store.suppressions.list('acme')).map((s) => s.email)).toEqual([address]);
      const second = await bounceOnce();
      expect(await timeline(t.store, second)).toEqual(['queued', 'sending', 'sent', 'bounced']);
    },
  );

  it.skipIf(t.skip)('a suppressed real address in a test message is still dropped as a live one would be', async () => {
    const { worker } = newWorker(
      { store: t.store, clock: t.clock, dataDir: tempDir(t.closer), blobs: testBlobs(t.closer) },
      t.closer,
    );
    await t.store.suppressions.add('acme', 'gone@example.com', 'hard_bounce', t.clock.now(), null);
    const id = await insertModeMessage(t.store, undefined, {
      to: ['gone@example.com'],
      mode: 'test',
      simulated: false,
      createdAt: t.clock.now(),
    });
    await worker.runOnce();
    expect((await t.store.messages.get('acme', id))?.status).toBe('discarded');
  });
});
