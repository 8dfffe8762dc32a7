import { expect, it } from 'vitest';
import { buildTestApp, testConfig, type TestApp } from '../support/app.js';
import { closerPerTest, tempDir } from '../support/cleanup.js';
import { newWorker } from '../support/delivery.js';
import { describeDialects } from '../support/dialects.js';
import { bearer } from '../support/http.js';
import { DYN, ROOMY } from '../support/orgs.js';
import { CONTACT_TEMPLATE, seedOrg } from '../support/seed.js';
import { sendOk } from '../support/send.js';
import { freshStore } from '../support/stores.js';
import { keepingComposer, testBlobs } from '../support/test-mode.js';

/**
 * Test mode end to end (issue 27 §4, R8): a send with a test key goes through the real worker
 * into the sandbox, and GET /v1/test-inbox/{id}/raw gives back the very bytes the relay's
 * composer produced, byte for byte; a retried hand-off (softbounce@) is captured once.
 */

describeDialects('a test send reaches the inbox on %s', (dialect, skip) => {
  const closer = closerPerTest();

  async function setup() {
    const ts = await freshStore(dialect);
    closer.defer(() => ts.cleanup());
    const blobs = testBlobs(closer);
    const config = testConfig();
    const app = await buildTestApp(config, { store: ts.store, clock: ts.clock, blobs: { blobs, uploadSecret: 'blob-secret' } });
    closer.defer(() => app.close());
    await app.ready();
    const t: TestApp = { ...ts, app, config };
    await seedOrg(t.store, { plan: ROOMY.plan, templates: [CONTACT_TEMPLATE, DYN] });
    const key = (await t.store.keys.insert('acme', 'private', t.clock.now(), undefined, 'test')).value;
    const { compose, composed, close } = keepingComposer();
    closer.defer(close);
    const { worker } = newWorker(
      { store: t.store, clock: t.clock, dataDir: tempDir(closer), blobs, testMode: { simulatorDelayMs: 9000, compose } },
      closer,
    );
    return { t, key, worker, composed };
  }

  it.skipIf(skip)('the raw download is the composed bytes, and the message says test and sent', async () => {
    const { t, key, worker, composed } = await setup();
    const body = {
      template_id: 'dyn',
      template_params: { to: 'ada@example.org', cc: 'carol@example.org', bcc: 'hidden@example.org', name: 'Ada' },
    };
    const { message_id: id } = await sendOk(t, body, bearer(key));
    expect(await worker.runOnce()).toBe(1);
    expect(composed).toHaveLength(1);
    const raw = await t.app.inject({ method: 'GET', url: `/v1/test-inbox/${id}/raw`, headers: bearer(key) });
    expect(raw.statusCode, raw.body).toBe(200);
    expect(raw.rawPayload.equals(composed[0]?.bytes ?? Buffer.alloc(0))).toBe(true);
    const message = await t.app.inject({ method: 'GET', url: `/v1/messages/${id}`, headers: bearer(key) });
    expect(message.json()).toMatchObject({ message_id: id, mode: 'test', status: 'sent' });
    const list = await t.app.inject({ method: 'GET', url: '/v1/test-inbox', headers: bearer(key) });
    expect(list.json()).toMatchObject({ items: [{ message_id: id, bcc: ['hidden@example.org'], status: 'sent' }] });
  });

  it.skipIf(skip)('softbounce@ is captured once: the retry finds it captured and keeps the first bytes', async () => {
    const { t, key, worker, composed } = await setup();
    const body = { template_id: 'dyn', template_params: { to: 'softbounce@simulator.mailroom.test', name: 'Ada' } };
    const { message_id: id } = await sendOk(t, body, bearer(key));
    expect(await worker.runOnce()).toBe(1);
    t.clock.advance(5000);
    expect(await worker.runOnce()).toBe(1);
    expect(composed).toHaveLength(1);
    const raw = await t.app.inject({ method: 'GET', url: `/v1/test-inbox/${id}/raw`, headers: bearer(key) });
    expect(raw.rawPayload.equals(composed[0]?.bytes ?? Buffer.alloc(0))).toBe(true);
    const list = await t.app.inject({ method: 'GET', url: '/v1/test-inbox', headers: bearer(key) });
    expect(list.json<{ items: unknown[] }>().items).toHaveLength(1);
  });
});
