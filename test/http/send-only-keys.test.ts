import { expect, it } from 'vitest';
import { admin, sendContact } from '../support/admin.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { describeDialects } from '../support/dialects.js';
import { expectError } from '../support/http.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';

/**
 * Issue 29: a `send_only` private key sends (POST /v1/send, the batch, uploads) and reads
 * nothing: history, a message and its timeline, templates, a render, the test inbox are each
 * 403 `forbidden` with `details.reason` `send_only_key`, the spec's envelope. A full key reads.
 */
const SEND_ONLY = 'sk_acme_send_only_0001';
const SEND_ONLY_TEST = 'sk_test_acme_send_only_0002';
const CONTACT = { name: 'Ann', email: 'ann@example.org', message: 'hi' };

describeDialects('send_only keys on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, async (app) => {
    t = app;
    await seedOrg(t.store);
    for (const [key, mode] of [
      [SEND_ONLY, 'live'],
      [SEND_ONLY_TEST, 'test'],
    ] as const) {
      const res = await admin(t, 'POST', '/organizations/acme/keys', { type: 'private', key, mode, scope: 'send_only' });
      expect(res.statusCode, res.body).toBe(201);
    }
  });

  const as = (key: string) => ({ authorization: `Bearer ${key}` });
  const get = (url: string, key: string) => t.app.inject({ method: 'GET', url, headers: as(key) });

  it.skipIf(skip)('sends: POST /v1/send 202, the batch 200 with the item accepted, an upload 201', async () => {
    const sent = await sendContact(t, SEND_ONLY);
    expect(sent.statusCode, sent.body).toBe(202);
    const batch = await t.app.inject({
      method: 'POST',
      url: '/v1/send-batch',
      headers: as(SEND_ONLY),
      payload: { messages: [{ template_id: 'contact', template_params: CONTACT }] },
    });
    expect(batch.statusCode, batch.body).toBe(200);
    expect(batch.json<{ results: Array<{ http_status: number }> }>().results.map((r) => r.http_status)).toEqual([202]);
    const upload = await t.app.inject({
      method: 'POST',
      url: '/v1/uploads',
      headers: as(SEND_ONLY),
      payload: { filename: 'a.txt', content_type: 'text/plain', size: 3 },
    });
    expect(upload.statusCode, upload.body).toBe(201);
    // A test send_only key sends too (captured).
    expect((await sendContact(t, SEND_ONLY_TEST)).statusCode).toBe(202);
  });

  it.skipIf(skip)('reads nothing: every read route is 403 forbidden, send_only_key; a full key reads them', async () => {
    const sent = await sendContact(t, SEND_ONLY);
    const id = sent.json<{ message_id: string }>().message_id;
    const testId = (await sendContact(t, SEND_ONLY_TEST)).json<{ message_id: string }>().message_id;
    const reads: Array<[string, () => ReturnType<typeof get>]> = [
      ['history', () => get('/v1/history', SEND_ONLY)],
      ['message', () => get(`/v1/messages/${id}`, SEND_ONLY)],
      ['templates', () => get('/v1/templates', SEND_ONLY)],
      ['template', () => get('/v1/templates/contact', SEND_ONLY)],
      [
        'render',
        () =>
          t.app.inject({
            method: 'POST',
            url: '/v1/templates/contact/render',
            headers: as(SEND_ONLY),
            payload: { template_params: CONTACT },
          }),
      ],
      // Refused for its scope, not for being live: send_only comes first.
      ['test inbox (live key)', () => get('/v1/test-inbox', SEND_ONLY)],
      ['test inbox', () => get('/v1/test-inbox', SEND_ONLY_TEST)],
      ['test inbox message', () => get(`/v1/test-inbox/${testId}`, SEND_ONLY_TEST)],
      ['test inbox raw', () => get(`/v1/test-inbox/${testId}/raw`, SEND_ONLY_TEST)],
      ['test history', () => get('/v1/history', SEND_ONLY_TEST)],
    ];
    for (const [what, read] of reads) {
      const res = await read();
      const error = expectError(res, 403, 'forbidden');
      expect(error.details, what).toEqual({ reason: 'send_only_key' });
    }
    // The same reads with the full key of the same organization answer.
    expect((await get('/v1/history', PRIVATE_KEY)).statusCode).toBe(200);
    expect((await get(`/v1/messages/${id}`, PRIVATE_KEY)).statusCode).toBe(200);
    expect((await get('/v1/templates', PRIVATE_KEY)).statusCode).toBe(200);
  });

  it.skipIf(skip)('a key narrowed by PATCH stops reading at once; widened again, it reads', async () => {
    expect((await get('/v1/history', PRIVATE_KEY)).statusCode).toBe(200);
    const id = (await t.store.keys.findByValue(PRIVATE_KEY))?.id ?? '';
    expect((await admin(t, 'PATCH', `/organizations/acme/keys/${id}`, { scope: 'send_only' })).statusCode).toBe(200);
    expectError(await get('/v1/history', PRIVATE_KEY), 403, 'forbidden');
    expect((await sendContact(t, PRIVATE_KEY)).statusCode).toBe(202);
    expect((await admin(t, 'PATCH', `/organizations/acme/keys/${id}`, { scope: 'full' })).statusCode).toBe(200);
    expect((await get('/v1/history', PRIVATE_KEY)).statusCode).toBe(200);
  });

  it.skipIf(skip)('a send records the key use, as a read does', async () => {
    expect((await sendContact(t, SEND_ONLY)).statusCode).toBe(202);
    await t.store.keyUse.idle();
    const key = await t.store.keys.findByValue(SEND_ONLY);
    expect(key?.last_used_at).toBe(t.clock.now());
  });
});
