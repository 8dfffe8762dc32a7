import { expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { idempotencyKeys } from '../support/db.js';
import { bearer, expectError } from '../support/http.js';
import { creditsOf, messageCount } from '../support/stored.js';
import { PARAMS } from '../support/send.js';
import { describeDialects } from '../support/dialects.js';

interface Result {
  index: number;
  status: string;
  message_id?: string;
  status_token?: string;
  http_status: number;
  error?: { code: string; message: string; docs_url: string; details?: Record<string, unknown> };
}

const item = (overrides: Record<string, unknown> = {}) => ({
  template_id: 'contact',
  template_params: { ...PARAMS },
  ...overrides,
});

describeDialects('POST /v1/send-batch on %s', (dialect, skip) => {
  let t: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const batch = (messages: unknown, headers: Record<string, string> = bearer()) =>
    t.app.inject({ method: 'POST', url: '/v1/send-batch', payload: { messages }, headers });
  const results = (res: { statusCode: number; json(): unknown }) => {
    expect(res.statusCode).toBe(200);
    return (res.json() as { results: Result[] }).results;
  };

  it.skipIf(skip)(
    'a batch of 100 with mixed good and bad items: each item on its own, one credit per accepted message',
    async () => {
      await seedOrg(t.store, { credits: 1000 });
      const messages = Array.from({ length: 100 }, (_, i) => {
        if (i % 10 === 1) return item({ template_id: 'nope' }); // 404 template_not_found
        if (i % 10 === 2) return item({ template_params: { name: 'x' } }); // 422 missing params
        if (i % 10 === 3) return { template_params: {} }; // 400 no template_id
        if (i % 10 === 4) return item({ service_id: 'missing' }); // 404 service_not_found
        return item({ template_params: { ...PARAMS, name: `Person ${i}` } });
      });
      const out = results(await batch(messages));
      expect(out).toHaveLength(100);
      expect(out.map((r) => r.index)).toEqual([...Array(100).keys()]);
      const codes = (i: number) => out[i]?.error?.code;
      expect(codes(1)).toBe('template_not_found');
      expect(out[1]?.http_status).toBe(404);
      expect(codes(2)).toBe('invalid_template_params');
      expect(codes(3)).toBe('invalid_body');
      expect(codes(4)).toBe('service_not_found');
      expect(out[1]?.error?.docs_url).toMatch(/#template-not-found$/);
      const accepted = out.filter((r) => r.status === 'queued');
      expect(accepted).toHaveLength(60);
      for (const r of accepted) {
        expect(r.http_status).toBe(202);
        expect(r.message_id).toMatch(/^msg_/);
        expect(r.status_token).toMatch(/^st_/);
      }
      expect(out.filter((r) => r.status === 'rejected')).toHaveLength(40);
      expect(await messageCount(t)).toBe(60);
      expect(await creditsOf(t)).toBe(940);
    },
  );

  it.skipIf(skip)('items out of credits are held or refused like single sends', async () => {
    await seedOrg(t.store, { credits: 2, when_out_of_credits: 'reject' });
    const out = results(await batch([item(), item(), item()]));
    expect(out.map((r) => r.status).sort()).toEqual(['queued', 'queued', 'rejected']);
    expect(out.find((r) => r.status === 'rejected')?.error?.code).toBe('insufficient_credits');
    expect(out.find((r) => r.status === 'rejected')?.http_status).toBe(402);
  });

  it.skipIf(skip)("per-item idempotency: `<header>:<index>` by default, or the item's own key", async () => {
    await seedOrg(t.store);
    const headers = { ...bearer(), 'idempotency-key': 'batch-1' };
    const messages = [item(), item({ idempotency_key: 'own-key' }), item()];
    const first = results(await batch(messages, headers));
    const again = results(await batch(messages, headers));
    expect(again.map((r) => r.message_id)).toEqual(first.map((r) => r.message_id));
    expect(await messageCount(t)).toBe(3);
    const keys = await idempotencyKeys(t.store);
    expect(keys).toEqual(['batch-1:0', 'batch-1:2', 'own-key']);
    // The same item key with another body is a conflict for that item only.
    const changed = results(
      await batch([item(), item({ idempotency_key: 'own-key', template_params: { ...PARAMS, name: 'Other' } })], headers),
    );
    expect(changed[0]?.message_id).toBe(first[0]?.message_id);
    expect(changed[1]?.error?.code).toBe('idempotency_conflict');
    // A malformed item key fails that item alone.
    const bad = results(await batch([item({ idempotency_key: 'bad key!' }), item()]));
    expect(bad[0]?.error?.code).toBe('invalid_idempotency_key');
    expect(bad[1]?.status).toBe('queued');
  });

  it.skipIf(skip)('a whole batch is one request for the per-second limits', async () => {
    // Free: 2 requests per second. A batch of 30 is one of them.
    await seedOrg(t.store, { plan: 'free', credits: 1000 });
    expect(results(await batch(Array.from({ length: 30 }, () => item()))).filter((r) => r.status === 'queued')).toHaveLength(30);
    expect(results(await batch([item()]))[0]?.status).toBe('queued');
    const third = await batch([item()]);
    expectError(third, 429, 'rate_limited');
    expect(third.headers['retry-after']).toBeDefined();
    expect(await messageCount(t)).toBe(31);
  });

  it.skipIf(skip)('request-level errors', async () => {
    await seedOrg(t.store);
    expectError(await batch([item()], { 'x-mail-public-key': PUBLIC_KEY }), 403, 'private_key_required');
    expectError(await batch([item()], {}), 401, 'unauthorized');
    expectError(await batch([item()], bearer('sk_unknown_0000')), 401, 'invalid_private_key');
    expectError(await batch([item()], { ...bearer(PRIVATE_KEY), origin: 'https://example.com' }), 403, 'private_key_in_browser');
    expectError(await batch([]), 400, 'invalid_body');
    expectError(await batch(Array.from({ length: 101 }, () => item())), 400, 'invalid_body');
    expectError(await batch('nope'), 400, 'invalid_body');
    expectError(await batch([item()], { ...bearer(), 'idempotency-key': '' }), 400, 'invalid_idempotency_key');
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/send-batch',
      headers: { ...bearer(), 'content-type': 'application/json' },
      payload: '{"messages":',
    });
    expectError(res, 400, 'bad_request');
    expect(await messageCount(t)).toBe(0);
  });
});
