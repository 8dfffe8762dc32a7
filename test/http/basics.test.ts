import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, freshApp, testConfig, type TestApp } from '../support/app.js';
import { freshStore } from '../support/stores.js';

describe('HTTP basics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await freshApp('sqlite', { MAILROOM_BODY_LIMIT_BYTES: '2048' });
  });
  afterAll(async () => t.cleanup());

  const expectEnvelope = (body: string, code: string) => {
    const parsed = JSON.parse(body) as { error: { code: string; message: string; docs_url: string } };
    expect(parsed.error.code).toBe(code);
    expect(parsed.error.message.length).toBeGreaterThan(0);
    expect(parsed.error.docs_url).toBe(`http://mailroom.test/docs/reference/errors/#${code.replaceAll('_', '-')}`);
    return parsed;
  };

  it('404 not_found for unknown URLs', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expectEnvelope(res.body, 'not_found');
  });

  it('400 bad_request for an unsupported method on a known path', async () => {
    const res = await t.app.inject({ method: 'DELETE', url: '/v1/templates/abc' });
    expect(res.statusCode).toBe(400);
    expectEnvelope(res.body, 'bad_request');
  });

  it('400 bad_request for unreadable JSON and for a wrong content type', async () => {
    const bad = await t.app.inject({
      method: 'PUT',
      url: '/admin/v1/organizations/x',
      headers: { 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expect(bad.statusCode).toBe(400);
    expectEnvelope(bad.body, 'bad_request');
    const wrongType = await t.app.inject({
      method: 'PUT',
      url: '/admin/v1/organizations/x',
      headers: { 'content-type': 'text/csv' },
      payload: 'a,b',
    });
    expect(wrongType.statusCode).toBe(400);
    expectEnvelope(wrongType.body, 'bad_request');
  });

  it('413 payload_too_large over the body limit', async () => {
    const res = await t.app.inject({
      method: 'PUT',
      url: '/admin/v1/organizations/x',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(4096) }),
    });
    expect(res.statusCode).toBe(413);
    expectEnvelope(res.body, 'payload_too_large');
  });

  it('puts CORS headers on successes, errors and preflights', async () => {
    const ok = await t.app.inject({ method: 'GET', url: '/v1/health', headers: { origin: 'https://site.example' } });
    expect(ok.headers['access-control-allow-origin']).toBe('https://site.example');
    const err = await t.app.inject({ method: 'GET', url: '/v1/templates', headers: { origin: 'https://site.example' } });
    expect(err.statusCode).toBe(401);
    expect(err.headers['access-control-allow-origin']).toBe('https://site.example');
    expect(String(err.headers['access-control-expose-headers'])).toContain('X-Mail-Message-Id');
    const missing = await t.app.inject({ method: 'GET', url: '/nope', headers: { origin: 'https://site.example' } });
    expect(missing.headers['access-control-allow-origin']).toBe('https://site.example');
    const pre = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/send',
      headers: {
        origin: 'https://site.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-mail-public-key',
      },
    });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('https://site.example');
    expect(String(pre.headers['access-control-allow-headers']).toLowerCase()).toContain('x-mail-public-key');
  });

  it('GET /v1/public-config needs no key and is cacheable for an hour', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/public-config' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=3600');
    expect(res.json()).toEqual({
      turnstile_site_key: null,
      turnstile_widget_url: 'http://mailroom.test/widget/turnstile',
      api_base_url: 'http://mailroom.test',
    });
    const widget = await t.app.inject({ method: 'GET', url: '/widget/turnstile' });
    expect(widget.statusCode).toBe(200);
    expect(widget.body).toContain('turnstile.render');
  });

  it('public-config carries the shared site key when configured', async () => {
    const other = await freshApp('sqlite', { MAILROOM_TURNSTILE_SITE_KEY: '0x4AAAshared' });
    try {
      const res = await other.app.inject({ method: 'GET', url: '/v1/public-config' });
      expect(res.json().turnstile_site_key).toBe('0x4AAAshared');
      expect((await other.app.inject({ method: 'GET', url: '/widget/turnstile' })).body).toContain('"0x4AAAshared"');
    } finally {
      await other.cleanup();
    }
  });

  it('serves an OpenAPI 3.1 document generated from the routes', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as {
      openapi: string;
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toBe('3.1.0');
    for (const p of ['/v1/health', '/v1/public-config', '/v1/templates', '/v1/templates/{id}'])
      expect(doc.paths).toHaveProperty([p]);
    expect(doc.components.schemas).toHaveProperty('ErrorEnvelope');
  });

  it('health is 200 with the database up', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok', database: 'ok', dialect: 'sqlite' });
  });
});

describe('failures inside the service', () => {
  it('health is 503 service_unavailable when the database is down', async () => {
    const ts = await freshStore('sqlite');
    const app = await buildTestApp(testConfig(), { store: ts.store, clock: ts.clock });
    await ts.store.close();
    const res = await app.inject({ method: 'GET', url: '/v1/health' });
    expect(res.statusCode).toBe(503);
    expect(res.json().error.code).toBe('service_unavailable');
    await app.close();
    await ts.database.drop();
  });

  it("a path that is not valid percent-encoding is 400 bad_request in the envelope, not Fastify's own body", async () => {
    const ts = await freshStore('sqlite');
    const app = await buildTestApp(testConfig(), { store: ts.store, clock: ts.clock });
    for (const url of ['/v1/messages/%FF', '/v1/messages/%', '/v1/templates/%ED%A0%80']) {
      const res = await app.inject({ method: 'GET', url, headers: { authorization: 'Bearer sk_whatever_123' } });
      expect(res.statusCode, url).toBe(400);
      expect(res.json<{ error: { code: string; message: string } }>().error).toMatchObject({
        code: 'bad_request',
        message: 'The request path is not valid percent-encoded UTF-8.',
      });
    }
    await app.close();
    await ts.cleanup();
  });

  it('a NUL that still reaches PostgreSQL (22021, 22P05) is 400 bad_request, not 500', async () => {
    const ts = await freshStore('sqlite');
    const refusing = (code: string) => async () => {
      throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code });
    };
    for (const code of ['22021', '22P05']) {
      const store = { ...ts.store, catalog: { ...ts.store.catalog, keyByValue: refusing(code) } };
      const app = await buildTestApp(testConfig(), { store, clock: ts.clock });
      const res = await app.inject({ method: 'GET', url: '/v1/templates', headers: { authorization: 'Bearer sk_whatever_123' } });
      expect(res.statusCode, code).toBe(400);
      expect(res.json<{ error: { code: string } }>().error.code).toBe('bad_request');
      await app.close();
    }
    await ts.cleanup();
  });

  it('an unexpected error is 500 internal_error with the request id and no internals', async () => {
    const ts = await freshStore('sqlite');
    const store = {
      ...ts.store,
      catalog: {
        ...ts.store.catalog,
        keyByValue: async () => {
          throw new Error('SQLITE_CORRUPT: secret internals at /var/db');
        },
      },
    };
    const app = await buildTestApp(testConfig(), { store, clock: ts.clock });
    const res = await app.inject({ method: 'GET', url: '/v1/templates', headers: { authorization: 'Bearer sk_whatever_123' } });
    expect(res.statusCode).toBe(500);
    const body = res.json() as { error: { code: string; details: { request_id: string } } };
    expect(body.error.code).toBe('internal_error');
    expect(body.error.details.request_id).toBe(res.headers['x-request-id']);
    expect(res.body).not.toContain('SQLITE_CORRUPT');
    expect(res.body).not.toContain('/var/db');
    await app.close();
    await ts.cleanup();
  });
});
