import { expect, it } from 'vitest';
import { ADMIN_TOKEN, freshAppEach, type TestApp } from '../support/app.js';
import { admin } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Issue 25: every admin route takes the admin token as a bearer or the UI's session cookie, yet
 * GET /admin/v1/session with the bearer answered 401 "No operator UI session". A script now
 * learns that bearer auth is in use; the cookie's answer is unchanged.
 */
describeDialects('GET /admin/v1/session by bearer on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)('the right bearer is 200 {"auth": "bearer"} with no expiry and no CSRF token, never cached', async () => {
    const res = await admin(t, 'GET', '/session');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ auth: 'bearer', expires_at: null, csrf_token: null });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it.skipIf(skip)(
    'a wrong bearer is 401, no credentials 401, and a cookie session still answers its expiry and CSRF token',
    async () => {
      expectError(await admin(t, 'GET', '/session', undefined, 'wrong-token-wrong-token'), 401, 'unauthorized');
      expectError(await admin(t, 'GET', '/session', undefined, null), 401, 'unauthorized');

      const signIn = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { token: ADMIN_TOKEN } });
      expect(signIn.statusCode, signIn.body).toBe(200);
      const cookie = /^(mailroom_session=[^;]+);/.exec(String(signIn.headers['set-cookie']))?.[1] ?? '';
      const res = await t.app.inject({ method: 'GET', url: '/admin/v1/session', headers: { cookie } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual(signIn.json());
      expect(Object.keys(res.json<object>()).sort()).toEqual(['csrf_token', 'expires_at']);
    },
  );

  it.skipIf(skip)('the OpenAPI document lists both schemes and both answers for GET /admin/v1/session', async () => {
    const doc = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(doc.statusCode).toBe(200);
    const op = doc.json<{ paths: Record<string, { get?: { security?: unknown; responses: Record<string, unknown> } }> }>().paths[
      '/admin/v1/session'
    ]?.get;
    expect(op?.security).toEqual([{ adminToken: [] }, { adminSession: [] }]);
    expect(JSON.stringify(op?.responses['200'])).toContain('"bearer"');
  });
});
