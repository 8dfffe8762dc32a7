import { expect, it } from 'vitest';
import type { TestApp } from '../support/app.js';
import { freshAppEach } from '../support/app.js';
import { closerPerTest, tempDir } from '../support/cleanup.js';
import { databaseOf } from '../support/db.js';
import { newWorker } from '../support/delivery.js';
import { describeDialects } from '../support/dialects.js';
import { bearer } from '../support/http.js';
import { CONTACT_TEMPLATE, PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { testBlobs, timeline } from '../support/test-mode.js';

const TEST_KEY = 'sk_test_simulator_mixed_0001';

/** Sends to `to` and `cc` of the parameters: two recipients a test may mix. */
const PAIR = {
  id: 'pair',
  subject: 'Pair {{name}}',
  to: '{{email}}',
  cc: '{{cc}}',
  from_email: 'noreply@acme.test',
  html: '<p>{{name}}</p>',
  text: '{{name}}',
  allow_dynamic_recipients: true,
  strict_params: true,
  params: [
    { name: 'name', type: 'string' as const, required: true },
    { name: 'email', type: 'email' as const, required: true },
    { name: 'cc', type: 'email' as const, required: true },
  ],
};

/** The acceptance rules of the simulator addresses (D2, D3, D4) through POST /v1/send, then delivery. */
describeDialects('simulator addresses at acceptance on %s', (dialect, skip) => {
  let t: TestApp;
  const closer = closerPerTest();
  freshAppEach(dialect, skip, async (a) => {
    t = a;
    await seedOrg(a.store, {
      keys: [
        { type: 'public', key: PUBLIC_KEY },
        { type: 'private', key: PRIVATE_KEY },
        { type: 'private', key: TEST_KEY, mode: 'test' },
      ],
      templates: [CONTACT_TEMPLATE, PAIR],
    });
  });

  const send = (key: string, email: string, cc: string) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/send',
      headers: bearer(key),
      payload: { template_id: 'pair', template_params: { name: 'Ada', email, cc } },
    });
  const messageCount = async () => (await databaseOf(t.store).selectFrom('messages').select('id').execute()).length;
  const credits = async () => (await t.store.credits.position('acme')).credits;

  it.skipIf(skip)('a live key mixing simulator and real recipients: 422 simulator_mixed, no message, no credit', async () => {
    const before = await credits();
    const res = await send(PRIVATE_KEY, 'delivered@simulator.mailroom.test', 'ann@example.com');
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json()).toMatchObject({ error: { code: 'invalid_recipient', details: { reason: 'simulator_mixed' } } });
    expect(await messageCount()).toBe(0);
    expect(await credits()).toBe(before);
  });

  it.skipIf(skip)('an unknown local part at the simulator domain: 422 unknown_simulator_address, with either key', async () => {
    for (const key of [PRIVATE_KEY, TEST_KEY]) {
      const res = await send(key, 'deliverd@simulator.mailroom.test', 'delivered@simulator.mailroom.test');
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({
        error: { details: { reason: 'unknown_simulator_address', recipients: ['deliverd@simulator.mailroom.test'] } },
      });
    }
    expect(await messageCount()).toBe(0);
  });

  it.skipIf(skip)('suppressed@: 451 with details.simulated before any message, with either key', async () => {
    for (const key of [PRIVATE_KEY, TEST_KEY]) {
      const res = await send(key, 'suppressed+x@simulator.mailroom.test', 'delivered@simulator.mailroom.test');
      expect(res.statusCode, res.body).toBe(451);
      expect(res.json()).toMatchObject({
        error: {
          code: 'recipient_suppressed',
          details: { simulated: true, recipients: ['suppressed+x@simulator.mailroom.test'] },
        },
      });
    }
    expect(await messageCount()).toBe(0);
  });

  it.skipIf(skip)(
    'a test key may mix: captured, sent, the simulator recipient delivered; no credit, nothing sent out',
    async () => {
      const before = await credits();
      const res = await send(TEST_KEY, 'delivered@simulator.mailroom.test', 'ann@example.com');
      expect(res.statusCode, res.body).toBe(202);
      const id = (res.json() as { message_id: string }).message_id;
      const { worker } = newWorker(
        { store: t.store, clock: t.clock, dataDir: tempDir(closer), blobs: testBlobs(closer) },
        closer,
      );
      expect(await worker.runOnce()).toBe(1);
      await worker.runOnce();
      expect(await t.store.testInbox.has(id)).toBe(true);
      expect(await timeline(t.store, id)).toEqual(['queued', 'sending', 'sent', 'delivered']);
      const m = await t.store.messages.get('acme', id);
      expect(m).toMatchObject({ mode: 'test', simulated: true });
      expect(await credits()).toBe(before);
    },
  );

  it.skipIf(skip)(
    'bounce@ twice with a live key: both accepted and both bounce (its own suppression row is not asked, D4)',
    async () => {
      const { worker } = newWorker(
        { store: t.store, clock: t.clock, dataDir: tempDir(closer), blobs: testBlobs(closer) },
        closer,
      );
      for (let i = 0; i < 2; i++) {
        const res = await send(PRIVATE_KEY, 'bounce@simulator.mailroom.test', 'delivered@simulator.mailroom.test');
        expect(res.statusCode, res.body).toBe(202);
        const id = (res.json() as { message_id: string }).message_id;
        await worker.runOnce();
        await worker.runOnce();
        expect((await t.store.messages.get('acme', id))?.status).toBe('delivered');
        expect(await timeline(t.store, id)).toContain('bounced');
      }
      expect((await t.store.suppressions.list('acme')).map((s) => [s.email, s.reason])).toEqual([
        ['bounce@simulator.mailroom.test', 'hard_bounce'],
      ]);
    },
  );
});
