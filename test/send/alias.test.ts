import type { LightMyRequestResponse } from 'fastify';
import { expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { creditsOf, messageCount } from '../support/stored.js';
import { expectAccepted, expectError } from '../support/http.js';
import { post, sendBody } from '../support/send.js';
import { describeDialects } from '../support/dialects.js';

const ALIAS = '/api/v1.0/email/send';
const privateKey = { authorization: `Bearer ${PRIVATE_KEY}` };

describeDialects('legacy alias POST /api/v1.0/email/send on %s', (dialect, skip) => {
  let t: TestApp;
  freshAppEach(dialect, skip, async (app) => {
    t = app;
    await seedOrg(t.store);
  });

  const alias = (body: unknown, headers: Record<string, string> = privateKey) => post(t, body, headers, ALIAS);

  /** 200 text/plain `OK`; the message is named only by the X-Mail-* headers, and exists. */
  const expectLegacyOk = async (res: LightMyRequestResponse, status: 'queued' | 'held' = 'queued') => {
    expect(res.statusCode, res.body).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^text\/plain/);
    expect(res.body).toBe('OK');
    const id = res.headers['x-mail-message-id'];
    expect(typeof id).toBe('string');
    expect(res.headers['x-mail-status']).toBe(status);
    const row = await t.store.messages.get('acme', String(id));
    expect(row?.status).toBe(status);
    return String(id);
  };

  it.skipIf(skip)('no Accept header: 200 text/plain OK with the X-Mail-* headers', async () => {
    await expectLegacyOk(await alias(sendBody()));
    expect(await messageCount(t)).toBe(1);
    expect(await creditsOf(t)).toBe(99);
  });

  it.skipIf(skip)('Accept: */* (what fetch sends by default): 200 OK', async () => {
    await expectLegacyOk(await alias(sendBody(), { ...privateKey, accept: '*/*' }));
  });

  it.skipIf(skip)('Accept that takes text/plain or anything beside JSON: 200 OK', async () => {
    for (const accept of [
      'application/json, text/plain',
      'application/json, text/plain, */*',
      'text/plain',
      'application/json;q=0.9, */*;q=0.8',
      'text/*, application/json',
    ]) {
      await expectLegacyOk(await alias(sendBody(), { ...privateKey, accept }));
    }
    expect(await messageCount(t)).toBe(5);
  });

  it.skipIf(skip)('X-Mail-Client: 202 with the JSON body', async () => {
    const res = await alias(sendBody(), { ...privateKey, 'x-mail-client': 'x/1' });
    const body = expectAccepted(res);
    expect((await t.store.messages.get('acme', body.message_id))?.status).toBe('queued');
    // Even when the Accept header would otherwise get the legacy answer.
    expectAccepted(await alias(sendBody(), { ...privateKey, 'x-mail-client': 'x/1', accept: '*/*' }));
  });

  it.skipIf(skip)('Accept: application/json only: 202 with the JSON body', async () => {
    expectAccepted(await alias(sendBody(), { ...privateKey, accept: 'application/json' }));
    expectAccepted(await alias(sendBody(), { ...privateKey, accept: 'Application/JSON; charset=utf-8' }));
    // Ranges refused with q=0 are not accepted at all (RFC 9110).
    expectAccepted(await alias(sendBody(), { ...privateKey, accept: 'application/json, text/plain;q=0' }));
    expectAccepted(await alias(sendBody(), { ...privateKey, accept: 'application/json, */*; q=0.0' }));
    expect(await messageCount(t)).toBe(4);
  });

  it.skipIf(skip)('held messages: the legacy answer is still 200 OK, with X-Mail-Status held', async () => {
    await t.store.organizations.update('acme', { credits: 0 }, t.clock.now());
    await expectLegacyOk(await alias(sendBody()), 'held');
    expectAccepted(await alias(sendBody(), { ...privateKey, 'x-mail-client': 'x/1' }), 'held');
  });

  it.skipIf(skip)('errors keep the JSON envelope, never the body OK', async () => {
    for (const headers of [privateKey, { ...privateKey, accept: '*/*' }, { ...privateKey, accept: 'text/plain' }]) {
      const res = await alias(sendBody({ template_id: 'nope' }), headers);
      expectError(res, 404, 'template_not_found');
      expect(res.body).not.toBe('OK');
    }
    expectError(await alias(sendBody({ service_id: 'nope' })), 404, 'service_not_found');
    expectError(await alias({ template_params: {} }), 400, 'invalid_body');
    expectError(await alias(sendBody({ template_params: { name: 'Ada' } })), 422, 'invalid_template_params');
    expectError(await alias(sendBody(), {}), 401, 'unauthorized');
    expectError(await alias(sendBody(), { 'x-mail-public-key': 'pk_unknown_0000000' }), 401, 'invalid_public_key');
    expectError(await alias('{"template_id":', { ...privateKey, 'content-type': 'application/json' }), 400, 'bad_request');
    expect(await messageCount(t)).toBe(0);
  });

  it.skipIf(skip)('a 402 on the alias is the JSON envelope too', async () => {
    await t.store.organizations.update('acme', { credits: 0, when_out_of_credits: 'reject' }, t.clock.now());
    const res = await alias(sendBody());
    expectError(res, 402, 'insufficient_credits');
    expect(res.headers['x-mail-message-id']).toBeUndefined();
  });

  it.skipIf(skip)('the public key in the body as user_id works', async () => {
    const id = await expectLegacyOk(await alias(sendBody({ user_id: PUBLIC_KEY }), {}));
    expect((await t.store.messages.get('acme', id))?.key_type).toBe('public');
  });

  it.skipIf(skip)('the private key in the body as accessToken works', async () => {
    const id = await expectLegacyOk(await alias(sendBody({ accessToken: PRIVATE_KEY }), {}));
    expect((await t.store.messages.get('acme', id))?.key_type).toBe('private');
  });

  it.skipIf(skip)('user_id and accessToken together (what the SDKs send): the private key is used', async () => {
    const id = await expectLegacyOk(
      await alias(sendBody({ user_id: PUBLIC_KEY, accessToken: PRIVATE_KEY, lib_version: '5.0.2' }), {}),
    );
    expect((await t.store.messages.get('acme', id))?.key_type).toBe('private');
  });

  it.skipIf(skip)('an unknown key in the body is 401 in JSON', async () => {
    expectError(await alias(sendBody({ user_id: 'pk_nobody_000000000' }), {}), 401, 'invalid_public_key');
    expectError(await alias(sendBody({ accessToken: 'sk_nobody_000000000' }), {}), 401, 'invalid_private_key');
  });

  it.skipIf(skip)('CORS: an allowed Origin gets Access-Control-Allow-Origin on the alias response', async () => {
    const res = await alias(sendBody({ user_id: PUBLIC_KEY }), { origin: 'https://app.example.com' });
    await expectLegacyOk(res);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
    // The browser may read the id and status of the message.
    expect(String(res.headers['access-control-expose-headers']).toLowerCase()).toContain('x-mail-message-id');
    expect(String(res.headers['access-control-expose-headers']).toLowerCase()).toContain('x-mail-status');
  });

  it.skipIf(skip)('CORS preflight of the alias succeeds', async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: ALIAS,
      headers: {
        origin: 'https://example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(res.statusCode).toBeLessThan(300);
    expect(res.headers['access-control-allow-origin']).toBe('https://example.com');
    expect(String(res.headers['access-control-allow-methods'])).toContain('POST');
  });

  it.skipIf(skip)('a public key from an origin not on the list is 403 origin_not_allowed in JSON', async () => {
    const res = await alias(sendBody({ user_id: PUBLIC_KEY }), { origin: 'https://evil.test' });
    expectError(res, 403, 'origin_not_allowed');
    expect(await messageCount(t)).toBe(0);
  });

  it.skipIf(skip)('a private key from a web page is 403 private_key_in_browser in JSON', async () => {
    expectError(
      await alias(sendBody({ accessToken: PRIVATE_KEY }), { origin: 'https://example.com' }),
      403,
      'private_key_in_browser',
    );
    expect(await messageCount(t)).toBe(0);
  });
});
