import fs from 'node:fs';
import path from 'node:path';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { installErrorHandling } from '../../src/errors/handler.js';
import { projectRoot, registerUi, UI_CSP } from '../../src/http/ui-static.js';
import { expectError } from '../support/http.js';
import { freshApp, testConfig, type TestApp } from '../support/app.js';

/**
 * The operator UI's files under /ui/ (issue 15), from dist/ui as `npm run build` leaves it
 * (npm test builds first).
 */
const DIST_UI = path.join(projectRoot(), 'dist/ui');

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; font-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

function expectUiHeaders(headers: Record<string, unknown>): void {
  expect(headers['content-security-policy']).toBe(CSP);
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('no-referrer');
  expect(headers['x-frame-options']).toBe('DENY');
}

describe('the operator UI static files', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  it('the policy is the one the contract names', () => {
    expect(UI_CSP).toBe(CSP);
  });

  it('/ui/ is index.html, not cached, with the CSP and security headers; /ui redirects there', async () => {
    expect(fs.existsSync(path.join(DIST_UI, 'index.html')), 'run `npm run build` first').toBe(true);
    t = await freshApp('sqlite');
    const res = await t.app.inject({ method: 'GET', url: '/ui/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expectUiHeaders(res.headers);
    expect(res.body).toBe(fs.readFileSync(path.join(DIST_UI, 'index.html'), 'utf8'));
    // The built page holds no inline script: everything comes from ./assets/.
    expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);

    const redirect = await t.app.inject({ method: 'GET', url: '/ui' });
    expect(redirect.statusCode).toBe(308);
    // Relative, so it resolves under a proxy's path prefix too: new URL('ui/', 'https://x/mail/ui').
    expect(redirect.headers.location).toBe('ui/');
    expect(new URL(String(redirect.headers.location), 'https://proxy.example/mail/ui').pathname).toBe('/mail/ui/');
    expectUiHeaders(redirect.headers);
    expect((await t.app.inject({ method: 'GET', url: '/ui?x=1' })).headers.location).toBe('ui/?x=1');
    expect((await t.app.inject({ method: 'HEAD', url: '/ui/' })).statusCode).toBe(200);
    // Pages, not API: none of it is in the OpenAPI document.
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{ paths: Record<string, unknown> }>();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/ui'))).toEqual([]);
  });

  it('hashed assets are cached for a year, immutable', async () => {
    t = await freshApp('sqlite');
    const assets = fs.readdirSync(path.join(DIST_UI, 'assets'));
    const script = assets.find((f) => f.endsWith('.js'));
    const style = assets.find((f) => f.endsWith('.css'));
    expect(script).toBeDefined();
    for (const [file, type] of [
      [script, /javascript/],
      [style, /text\/css/],
    ] as const) {
      if (file === undefined) continue;
      const res = await t.app.inject({ method: 'GET', url: `/ui/assets/${file}` });
      expect(res.statusCode, file).toBe(200);
      expect(res.headers['content-type']).toMatch(type);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expectUiHeaders(res.headers);
    }
  });

  it('unknown paths under /ui/ are the 404 envelope, traversal included', async () => {
    t = await freshApp('sqlite');
    for (const url of [
      '/ui/nope.html',
      '/ui/assets/missing-abc123.js',
      '/ui/assets/',
      '/ui/../package.json',
      '/ui/%2e%2e/package.json',
      '/ui/.hidden',
    ]) {
      const res = await t.app.inject({ method: 'GET', url });
      expectError(res, 404, 'not_found');
      expect(res.body, url).not.toContain('"name": "mailroom"');
    }
    const res = await t.app.inject({ method: 'GET', url: '/ui/nope' });
    expectError(res, 404, 'not_found');
    expectUiHeaders(res.headers);
  });

  it('without MAILROOM_ADMIN_TOKEN there is no UI: /ui/ is a 404 like /admin/v1', async () => {
    t = await freshApp('sqlite', { MAILROOM_ADMIN_TOKEN: '' });
    expect(t.config.adminToken).toBeUndefined();
    expectError(await t.app.inject({ method: 'GET', url: '/ui/' }), 404, 'not_found');
    expectError(await t.app.inject({ method: 'GET', url: '/ui' }), 404, 'not_found');
    const asset = fs.readdirSync(path.join(DIST_UI, 'assets'))[0];
    expectError(await t.app.inject({ method: 'GET', url: `/ui/assets/${asset}` }), 404, 'not_found');
    expectError(await t.app.inject({ method: 'GET', url: '/admin/v1/session' }), 404, 'not_found');
  });

  it('an unbuilt checkout answers /ui/ with a 503 saying to run npm run build', async () => {
    const config = testConfig();
    const app = Fastify({ routerOptions: { ignoreTrailingSlash: true } }).withTypeProvider<TypeBoxTypeProvider>();
    try {
      installErrorHandling(app, config.docsUrl, []);
      await registerUi(app, { config }, path.join(projectRoot(), 'no-such-dist/ui'));
      const res = await app.inject({ method: 'GET', url: '/ui/' });
      const err = expectError(res, 503, 'service_unavailable');
      expect(err.message).toContain('npm run build');
      expectUiHeaders(res.headers);
      expectError(await app.inject({ method: 'GET', url: '/ui/assets/x.js' }), 404, 'not_found');
    } finally {
      await app.close();
    }
  });
});
