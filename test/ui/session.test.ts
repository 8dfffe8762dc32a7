import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import type { App } from '../../src/http/app-types.js';
import { expectError } from '../support/http.js';
import { ADMIN_SECURITY } from '../../src/admin/routes/common.js';
import { ADMIN_TOKEN, buildTestApp, freshApp, freshAppEach, testConfig, type TestApp } from '../support/app.js';
import { seedOrg } from '../support/seed.js';
import { openTestStore } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

/** The operator UI's sign-in (issue 15): POST/GET/DELETE /admin/v1/session and the cookie on admin routes. */

interface Signed {
  cookie: string;
  csrf: string;
  res: LightMyRequestResponse;
}

const HOST = 'mailroom.test';

function call(
  app: App,
  method: InjectOptions['method'],
  path: string,
  opts: { cookie?: string; csrf?: string; origin?: string; body?: unknown; ip?: string; bearer?: string } = {},
) {
  const headers: Record<string, string> = { host: HOST };
  if (opts.cookie !== undefined) headers.cookie = opts.cookie;
  if (opts.csrf !== undefined) headers['x-csrf-token'] = opts.csrf;
  if (opts.origin !== undefined) headers.origin = opts.origin;
  if (opts.bearer !== undefined) headers.authorization = `Bearer ${opts.bearer}`;
  const options: InjectOptions = { method, url: `/admin/v1${path}`, headers, remoteAddress: opts.ip ?? '127.0.0.1' };
  if (opts.body !== undefined) options.payload = opts.body as InjectOptions['payload'];
  return app.inject(options);
}

async function signIn(app: App, token = ADMIN_TOKEN, ip?: string, cookie?: string): Promise<Signed> {
  const res = await call(app, 'POST', '/session', {
    body: { token },
    ...(ip === undefined ? {} : { ip }),
    ...(cookie === undefined ? {} : { cookie }),
  });
  expect(res.statusCode, res.body).toBe(200);
  const setCookie = String(res.headers['set-cookie']);
  const value = /^mailroom_session=([^;]+);/.exec(setCookie)?.[1];
  expect(value).toBeDefined();
  return { cookie: `mailroom_session=${value}`, csrf: res.json<{ csrf_token: string }>().csrf_token, res };
}

describeDialects('operator UI session on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)(
    'signing in sets an HttpOnly SameSite=Strict cookie for 12 h and answers the expiry and a CSRF token',
    async () => {
      const { res, cookie, csrf } = await signIn(t.app);
      const setCookie = String(res.headers['set-cookie']);
      expect(setCookie).toMatch(/^mailroom_session=[A-Za-z0-9_-]{43}; /);
      for (const part of ['Path=/', 'HttpOnly', 'SameSite=Strict', 'Max-Age=43200']) expect(setCookie).toContain(part);
      expect(setCookie).not.toContain('Secure');
      const body = res.json<{ expires_at: string; csrf_token: string }>();
      expect(body.expires_at).toBe(new Date(t.clock.now() + 12 * 3_600_000).toISOString());
      expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(res.body).not.toContain(ADMIN_TOKEN);

      const got = await call(t.app, 'GET', '/session', { cookie });
      expect(got.statusCode, got.body).toBe(200);
      expect(got.json()).toEqual(body);
      expectError(await call(t.app, 'GET', '/session'), 401, 'unauthorized');
      expectError(await call(t.app, 'GET', '/session', { cookie: 'mailroom_session=made-up' }), 401, 'unauthorized');
    },
  );

  it.skipIf(skip)('a wrong token is a 401 with a clear message, and sets no cookie', async () => {
    const res = await call(t.app, 'POST', '/session', { body: { token: `${ADMIN_TOKEN}x` } });
    const err = expectError(res, 401, 'unauthorized');
    expect(err.message).toBe('The admin token is wrong.');
    expect(res.headers['set-cookie']).toBeUndefined();
    expectError(await call(t.app, 'POST', '/session', { body: {} }), 400, 'invalid_body');
  });

  it.skipIf(skip)('signing out deletes the session and clears the cookie; it needs the CSRF token', async () => {
    const { cookie, csrf } = await signIn(t.app);
    expectError(await call(t.app, 'DELETE', '/session', { cookie }), 403, 'forbidden');
    const out = await call(t.app, 'DELETE', '/session', { cookie, csrf });
    expect(out.statusCode, out.body).toBe(204);
    const cleared = String(out.headers['set-cookie']);
    expect(cleared).toMatch(/^mailroom_session=; /);
    for (const part of ['Max-Age=0', 'Path=/', 'HttpOnly', 'SameSite=Strict']) expect(cleared).toContain(part);
    expectError(await call(t.app, 'GET', '/session', { cookie }), 401, 'unauthorized');
    expectError(await call(t.app, 'GET', '/organizations', { cookie }), 401, 'unauthorized');
  });

  it.skipIf(skip)('an expired session is refused, and expired rows go on the next sign-in', async () => {
    const { cookie } = await signIn(t.app);
    t.clock.advance(12 * 3_600_000 - 1);
    expect((await call(t.app, 'GET', '/organizations', { cookie })).statusCode).toBe(200);
    t.clock.advance(1);
    expectError(await call(t.app, 'GET', '/session', { cookie }), 401, 'unauthorized');
    expectError(await call(t.app, 'GET', '/organizations', { cookie }), 401, 'unauthorized');
    await signIn(t.app);
    // Only the new session is left: the expired row was purged by that sign-in.
    expect(await t.store.adminSessions.purgeExpired(t.clock.now())).toBe(0);
  });

  it.skipIf(skip)('the cookie works on admin routes; a write needs the CSRF token and this origin', async () => {
    await seedOrg(t.store);
    const { cookie, csrf } = await signIn(t.app);
    const read = await call(t.app, 'GET', '/organizations/acme', { cookie });
    expect(read.statusCode, read.body).toBe(200);
    const topUp = { body: { amount: 5 } };
    const noCsrf = expectError(await call(t.app, 'POST', '/organizations/acme/credits', { cookie, ...topUp }), 403, 'forbidden');
    expect(noCsrf.message).toContain('X-CSRF-Token');
    expectError(
      await call(t.app, 'POST', '/organizations/acme/credits', { cookie, csrf: `${csrf}x`, ...topUp }),
      403,
      'forbidden',
    );
    expectError(await call(t.app, 'POST', '/organizations/acme/credits', { cookie, csrf: '', ...topUp }), 403, 'forbidden');
    const crossSite = expectError(
      await call(t.app, 'POST', '/organizations/acme/credits', { cookie, csrf, origin: 'https://evil.example', ...topUp }),
      403,
      'forbidden',
    );
    expect(crossSite.message).toContain('Origin');
    expectError(
      await call(t.app, 'POST', '/organizations/acme/credits', { cookie, csrf, origin: 'null', ...topUp }),
      403,
      'forbidden',
    );
    // Nothing was added by the refused calls.
    const before = (await call(t.app, 'GET', '/organizations/acme/credits', { cookie })).json<{ credits: number }>().credits;
    const sameOrigin = await call(t.app, 'POST', '/organizations/acme/credits', {
      cookie,
      csrf,
      origin: `http://${HOST}`,
      ...topUp,
    });
    expect(sameOrigin.statusCode, sameOrigin.body).toBe(200);
    expect(sameOrigin.json<{ credits: number }>().credits).toBe(before + 5);
    const noOrigin = await call(t.app, 'POST', '/organizations/acme/credits', { cookie, csrf, ...topUp });
    expect(noOrigin.statusCode, noOrigin.body).toBe(200);
  });

  it.skipIf(skip)('a cross-origin sign-in is refused', async () => {
    const res = await call(t.app, 'POST', '/session', { body: { token: ADMIN_TOKEN }, origin: 'https://evil.example' });
    expectError(res, 403, 'forbidden');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it.skipIf(skip)('the bearer token still works without CSRF, and a wrong bearer is not rescued by a cookie', async () => {
    await seedOrg(t.store);
    const res = await call(t.app, 'POST', '/organizations/acme/credits', { bearer: ADMIN_TOKEN, body: { amount: 1 } });
    expect(res.statusCode, res.body).toBe(200);
    const { cookie } = await signIn(t.app);
    expectError(
      await call(t.app, 'GET', '/organizations/acme', { cookie, bearer: 'wrong-token-wrong-token' }),
      401,
      'unauthorized',
    );
  });

  it.skipIf(skip)(
    '5 wrong tokens from one address → 429 with Retry-After for wrong ' +
      'ones, never for the right token (issue 25); other addresses unaffected',
    async () => {
      const ip = '203.0.113.9';
      for (let i = 0; i < 5; i++)
        expectError(await call(t.app, 'POST', '/session', { body: { token: `wrong-${i}` }, ip }), 401, 'unauthorized');
      const limited = await call(t.app, 'POST', '/session', { body: { token: 'wrong-5' }, ip });
      expectError(limited, 429, 'rate_limited');
      expect(Number(limited.headers['retry-after'])).toBe(15 * 60);
      expect(limited.headers['set-cookie']).toBeUndefined();
      await signIn(t.app, ADMIN_TOKEN, ip);
      await signIn(t.app, ADMIN_TOKEN, '203.0.113.10');
      // The window slides: once the first failure is 15 minutes old, one more try is allowed.
      t.clock.advance(15 * 60_000 - 1000);
      expect(Number((await call(t.app, 'POST', '/session', { body: { token: 'x' }, ip })).headers['retry-after'])).toBe(1);
      t.clock.advance(1000);
      await signIn(t.app, ADMIN_TOKEN, ip);
    },
  );

  it.skipIf(skip)(
    'wrong bearers on admin routes count toward the same limit: then wrong tokens at sign-in and as a bearer are 429',
    async () => {
      const ip = '203.0.113.20';
      for (let i = 0; i < 5; i++) {
        const res = await call(t.app, 'GET', '/organizations', { bearer: `wrong-token-${i}-wrong-token`, ip });
        expectError(res, 401, 'unauthorized');
        expect(res.headers['www-authenticate']).toContain('Bearer');
      }
      const signInRefused = await call(t.app, 'POST', '/session', { body: { token: 'wrong-at-sign-in' }, ip });
      expectError(signInRefused, 429, 'rate_limited');
      expect(Number(signInRefused.headers['retry-after'])).toBe(15 * 60);
      expect(signInRefused.headers['set-cookie']).toBeUndefined();
      const bearerRefused = await call(t.app, 'GET', '/organizations', { bearer: 'wrong-token-5-wrong-token', ip });
      expectError(bearerRefused, 429, 'rate_limited');
      expect(Number(bearerRefused.headers['retry-after'])).toBe(15 * 60);
      // The right token is compared first and always passes.
      expect((await call(t.app, 'GET', '/organizations', { bearer: ADMIN_TOKEN, ip })).statusCode).toBe(200);
      // Another address is not affected, by bearer or sign-in.
      expect((await call(t.app, 'GET', '/organizations', { bearer: ADMIN_TOKEN, ip: '203.0.113.21' })).statusCode).toBe(200);
      await signIn(t.app, ADMIN_TOKEN, '203.0.113.21');
      t.clock.advance(15 * 60_000);
      expect((await call(t.app, 'GET', '/organizations', { bearer: ADMIN_TOKEN, ip })).statusCode).toBe(200);
    },
  );

  it.skipIf(skip)(
    'wrong sign-ins and wrong bearers share one count; a right token does not reset it; a signed-in cookie is not locked out',
    async () => {
      const ip = '203.0.113.30';
      const { cookie } = await signIn(t.app, ADMIN_TOKEN, ip);
      for (let i = 0; i < 3; i++)
        expectError(await call(t.app, 'POST', '/session', { body: { token: `wrong-${i}` }, ip }), 401, 'unauthorized');
      expect((await call(t.app, 'GET', '/organizations', { bearer: ADMIN_TOKEN, ip })).statusCode).toBe(200);
      expectError(
        await call(t.app, 'DELETE', '/organizations/acme/keys/key_x', { bearer: 'wrong-token-wrong-token', ip }),
        401,
        'unauthorized',
      );
      expectError(await call(t.app, 'GET', '/organizations', { bearer: 'wrong-token-wrong-token', ip }), 401, 'unauthorized');
      expectError(await call(t.app, 'GET', '/organizations', { bearer: 'wrong-token-wrong-token', ip }), 429, 'rate_limited');
      expectError(await call(t.app, 'POST', '/session', { body: { token: 'wrong-again' }, ip }), 429, 'rate_limited');
      expect((await call(t.app, 'GET', '/organizations', { bearer: ADMIN_TOKEN, ip })).statusCode).toBe(200);
      // The cookie compares no token: the operator already signed in keeps working.
      expect((await call(t.app, 'GET', '/organizations', { cookie, ip })).statusCode).toBe(200);
    },
  );

  it.skipIf(skip)(
    'signing in again with a still-valid session cookie ends that session; a wrong token leaves it alone',
    async () => {
      const first = await signIn(t.app);
      expectError(
        await call(t.app, 'POST', '/session', { body: { token: 'wrong-token' }, cookie: first.cookie }),
        401,
        'unauthorized',
      );
      expect((await call(t.app, 'GET', '/session', { cookie: first.cookie })).statusCode).toBe(200);
      const second = await signIn(t.app, ADMIN_TOKEN, undefined, first.cookie);
      expect(second.cookie).not.toBe(first.cookie);
      expectError(await call(t.app, 'GET', '/session', { cookie: first.cookie }), 401, 'unauthorized');
      expectError(await call(t.app, 'GET', '/organizations', { cookie: first.cookie }), 401, 'unauthorized');
      expect((await call(t.app, 'GET', '/session', { cookie: second.cookie })).json<{ csrf_token: string }>().csrf_token).toBe(
        second.csrf,
      );
      expect((await call(t.app, 'GET', '/organizations', { cookie: second.cookie })).statusCode).toBe(200);
    },
  );

  it.skipIf(skip)(
    'a new admin token ends every session: one made under token X is refused by an app with token Y on the same database',
    async () => {
      const { cookie, csrf } = await signIn(t.app);
      const clock = new ManualClock(t.clock.now());
      const store = await openTestStore(t.database.url, clock);
      const rotated = await buildTestApp(testConfig({ MAILROOM_ADMIN_TOKEN: 'rotated-admin-token-9876543210abcdef' }), {
        store,
        clock,
      });
      try {
        expectError(await call(rotated, 'GET', '/session', { cookie }), 401, 'unauthorized');
        expectError(await call(rotated, 'GET', '/organizations', { cookie }), 401, 'unauthorized');
        expectError(
          await call(rotated, 'POST', '/organizations/acme/credits', { cookie, csrf, body: { amount: 1 } }),
          401,
          'unauthorized',
        );
        // The new token signs in there, and that session means nothing to the old token's app.
        const fresh = await signIn(rotated, 'rotated-admin-token-9876543210abcdef');
        expect((await call(rotated, 'GET', '/organizations', { cookie: fresh.cookie })).statusCode).toBe(200);
        expectError(await call(t.app, 'GET', '/session', { cookie: fresh.cookie }), 401, 'unauthorized');
        // The old app, still on token X, still honours its own session.
        expect((await call(t.app, 'GET', '/session', { cookie })).statusCode).toBe(200);
      } finally {
        await rotated.close();
        await store.close();
      }
    },
  );

  it.skipIf(skip)(
    'the OpenAPI document says what each /session method needs: nothing to sign in, either to read or sign out',
    async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{
        paths: Record<string, Record<string, { security?: unknown }>>;
      }>();
      const ops = doc.paths['/admin/v1/session'];
      expect(ops?.post?.security).toEqual([]);
      expect(ops?.get?.security).toEqual(ADMIN_SECURITY);
      expect(ops?.delete?.security).toEqual(ADMIN_SECURITY);
      // A bearer names no session, but reading it says bearer auth is in use (issue 25; it was a 401).
      expect((await call(t.app, 'GET', '/session', { bearer: ADMIN_TOKEN })).json()).toEqual({
        auth: 'bearer',
        expires_at: null,
        csrf_token: null,
      });
    },
  );

  it.skipIf(skip)(
    'a session made by one app instance holds on a second one over the same database, and a sign-out ends it there',
    async () => {
      const { cookie, csrf } = await signIn(t.app);
      const clock = new ManualClock(t.clock.now());
      const store = await openTestStore(t.database.url, clock);
      const second = await buildTestApp(t.config, { store, clock });
      try {
        const res = await call(second, 'GET', '/organizations', { cookie });
        expect(res.statusCode, res.body).toBe(200);
        expect((await call(second, 'GET', '/session', { cookie })).json<{ csrf_token: string }>().csrf_token).toBe(csrf);
        expect((await call(second, 'DELETE', '/session', { cookie, csrf })).statusCode).toBe(204);
        expectError(await call(t.app, 'GET', '/organizations', { cookie }), 401, 'unauthorized');
      } finally {
        await second.close();
        await store.close();
      }
    },
  );
});

describe('operator UI session settings', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  it('the cookie is Secure in production, and MAILROOM_UI_SESSION_HOURS sets its life', async () => {
    t = await freshApp('sqlite', { MAILROOM_ENV: 'production', MAILROOM_UI_SESSION_HOURS: '2' });
    const { res } = await signIn(t.app);
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toContain('; Secure');
    expect(setCookie).toContain('Max-Age=7200');
    expect(res.json<{ expires_at: string }>().expires_at).toBe(new Date(t.clock.now() + 2 * 3_600_000).toISOString());
  });

  it('the cookie is Secure when MAILROOM_BASE_URL is https, in development too, and so is the clearing one', async () => {
    t = await freshApp('sqlite', { MAILROOM_ENV: 'development', MAILROOM_BASE_URL: 'https://mailroom.test' });
    const { res, cookie, csrf } = await signIn(t.app);
    expect(String(res.headers['set-cookie'])).toMatch(/^mailroom_session=[^;]+;.*; Secure$/);
    const out = await call(t.app, 'DELETE', '/session', { cookie, csrf });
    expect(out.statusCode, out.body).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^mailroom_session=;.*; Secure$/);
  });

  it('MAILROOM_UI_SESSION_HOURS must be a whole number of hours', () => {
    expect(() => testConfig({ MAILROOM_UI_SESSION_HOURS: '0' })).toThrow(/MAILROOM_UI_SESSION_HOURS/);
    expect(() => testConfig({ MAILROOM_UI_SESSION_HOURS: '1.5' })).toThrow(/MAILROOM_UI_SESSION_HOURS/);
    expect(testConfig().uiSessionMs).toBe(12 * 3_600_000);
  });
});
