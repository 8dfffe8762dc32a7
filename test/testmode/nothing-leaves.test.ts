import { expect, it } from 'vitest';
import { creditsOf } from '../support/stored.js';
import { deliveryHarness, PARAMS } from '../support/delivery.js';
import { describeDialects } from '../support/dialects.js';
import { testBlobs } from '../support/test-mode.js';

/**
 * Issue 27 §1 and its acceptance: a test key's send runs the whole pipeline, and nothing reaches
 * the organization's relay. The same send with a live key does reach it, so the sink is listening.
 */
describeDialects('a test key sends nothing to the relay on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)('the real SMTP sink receives the live send only; the test send is captured, no credit taken', async () => {
    const { t, sink } = await h.smtpApp();
    const { worker } = h.worker(t, { blobs: testBlobs(h.closer) });
    const testKey = (await t.store.keys.insert('acme', 'private', t.clock.now(), undefined, 'test')).value;
    const liveKey = (await t.store.keys.insert('acme', 'private', t.clock.now())).value;
    const before = await creditsOf(t);
    const send = async (key: string) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/send',
        headers: { authorization: `Bearer ${key}` },
        payload: { template_id: 'contact', template_params: PARAMS },
      });
      expect(res.statusCode, res.body).toBe(202);
      return (res.json() as { message_id: string }).message_id;
    };

    const test = await send(testKey);
    expect(await worker.runOnce()).toBe(1);
    expect(sink.received).toHaveLength(0);
    expect(await t.store.testInbox.has(test)).toBe(true);
    expect(await creditsOf(t)).toBe(before);

    await send(liveKey);
    expect(await worker.runOnce()).toBe(1);
    expect(sink.received).toHaveLength(1);
  });
});
