import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshApp, type TestApp } from '../support/app.js';
import { CONTACT_TEMPLATE, seedOrg } from '../support/seed.js';
import { CONTACT_PARAMS } from '../support/send.js';
import { orgsLike, PROTECTED_TEMPLATE, ORIGIN, pkOf, skOf } from '../support/orgs.js';
import { deadUrl, startTurnstile, TEST_FAIL_SECRET, TEST_PASS_SECRET, type FakeTurnstile } from '../support/turnstile.js';
import { expectAccepted, expectError } from '../support/http.js';
import { snapshot } from '../support/stored.js';
import { describeDialects } from '../support/dialects.js';

/** Authentication rule 8 (CAPTCHA) through POST /v1/send, against a local siteverify server. */

const SHARED_SECRET = 'shared-mobile-secret';

const org = orgsLike(
  (id) => ({
    captcha: { site_key: `site-${id}`, secret_key: `secret-${id}` },
    templates: [CONTACT_TEMPLATE, PROTECTED_TEMPLATE],
  }),
  { allowed_origins: ['example.com', '*.example.com'] },
);

const body = (extra: Record<string, unknown> = {}) => ({ template_id: 'protected', template_params: CONTACT_PARAMS, ...extra });

describeDialects('CAPTCHA on %s', (dialect, skip) => {
  let t: TestApp;
  let prod: TestApp;
  let ts: FakeTurnstile;

  beforeAll(async () => {
    if (skip) return;
    ts = await startTurnstile(['secret-acme', 'secret-nomobile', 'secret-free', SHARED_SECRET]);
    t = await freshApp(dialect, {
      MAILROOM_TURNSTILE_VERIFY_URL: ts.url,
      MAILROOM_TURNSTILE_SITE_KEY: 'shared-site-key',
      MAILROOM_TURNSTILE_SECRET_KEY: SHARED_SECRET,
      MAILROOM_TURNSTILE_TIMEOUT_MS: '400',
    });
    await seedOrg(t.store, org('acme'));
    await seedOrg(t.store, org('nokeys', { captcha: null }));
    await seedOrg(t.store, org('badsecret', { captcha: { site_key: 's', secret_key: 'not-known-to-cloudflare' } }));
    await seedOrg(t.store, org('testkeys', { captcha: { site_key: '1x00000000000000000000AA', secret_key: TEST_PASS_SECRET } }));
    await seedOrg(t.store, org('failkeys', { captcha: { site_key: '2x00000000000000000000AB', secret_key: TEST_FAIL_SECRET } }));
    await seedOrg(t.store, org('nomobile', {}, { allow_mobile_apps: false }));
    await seedOrg(t.store, org('free', { plan: 'free' }));
    prod = await freshApp(dialect, { MAILROOM_ENV: 'production', MAILROOM_TURNSTILE_VERIFY_URL: ts.url });
    await seedOrg(
      prod.store,
      org('testkeys', { captcha: { site_key: '1x00000000000000000000AA', secret_key: TEST_PASS_SECRET } }),
    );
    await seedOrg(prod.store, org('acme'));
  });
  afterAll(async () => {
    if (skip) return;
    await t.cleanup();
    await prod.cleanup();
    await ts.close();
  });

  const send = (
    app: TestApp,
    orgId: string,
    payload: Record<string, unknown>,
    headers: Record<string, string> = { origin: ORIGIN },
    extra: Partial<InjectOptions> = {},
  ) =>
    app.app.inject({
      method: 'POST',
      url: '/v1/send',
      payload,
      headers: { 'x-mail-public-key': pkOf(orgId), ...headers },
      ...extra,
    });

  /** A send that must be refused with (status, code) and leave no message and no used credit. */
  async function refused(
    app: TestApp,
    orgId: string,
    status: number,
    code: string,
    payload: Record<string, unknown>,
    headers?: Record<string, string>,
  ) {
    const before = await snapshot(app, orgId);
    const err = expectError(await send(app, orgId, payload, headers), status, code);
    expect(await snapshot(app, orgId)).toEqual(before);
    return err;
  }

  it.skipIf(skip)('403 captcha_required without a token; the template without CAPTCHA needs none', async () => {
    await refused(t, 'acme', 403, 'captcha_required', body());
    await refused(t, 'acme', 403, 'captcha_required', body({ turnstile_token: '' }));
    expectAccepted(await send(t, 'acme', body({ template_id: 'contact' })));
  });

  it.skipIf(skip)('private keys skip the check', async () => {
    const calls = ts.calls.length;
    expectAccepted(
      await t.app.inject({
        method: 'POST',
        url: '/v1/send',
        payload: body(),
        headers: { authorization: `Bearer ${skOf('acme')}` },
      }),
    );
    expect(ts.calls.length).toBe(calls);
  });

  it.skipIf(skip)(
    "a web page's token is verified with the organization's own secret, the client IP and an idempotency key",
    async () => {
      const token = ts.issue('example.com');
      expectAccepted(
        await send(t, 'acme', body({ turnstile_token: token }), { origin: ORIGIN }, { remoteAddress: '198.51.100.23' }),
      );
      const call = ts.calls.at(-1);
      expect(call).toMatchObject({ secret: 'secret-acme', response: token, remoteip: '198.51.100.23' });
      expect(call?.idempotency_key).toMatch(/^[0-9a-f-]{36}$/);
      // A subdomain page solves its own widget: the hostname must be the Origin's.
      expectAccepted(
        await send(t, 'acme', body({ turnstile_token: ts.issue('shop.example.com') }), { origin: 'https://shop.example.com' }),
      );
    },
  );

  it.skipIf(skip)('a token is single use, even when the verifier would accept it again', async () => {
    ts.acceptReplays = true;
    try {
      const token = ts.issue('example.com');
      expectAccepted(await send(t, 'acme', body({ turnstile_token: token })));
      const calls = ts.calls.length;
      const err = await refused(t, 'acme', 403, 'captcha_failed', body({ turnstile_token: token }));
      expect(err.details?.reason).toBe('token_reused');
      expect(ts.calls.length).toBe(calls);
    } finally {
      ts.acceptReplays = false;
    }
  });

  it.skipIf(skip)('403 captcha_failed for a token the verifier rejects, an expired one and one it already saw', async () => {
    expect((await refused(t, 'acme', 403, 'captcha_failed', body({ turnstile_token: 'forged-token' }))).details).toMatchObject({
      reason: 'invalid_token',
      error_codes: ['invalid-input-response'],
    });
    const expired = ts.issue('example.com');
    ts.expire(expired);
    expect((await refused(t, 'acme', 403, 'captcha_failed', body({ turnstile_token: expired }))).details).toMatchObject({
      reason: 'expired_or_used',
      error_codes: ['timeout-or-duplicate'],
    });
  });

  it.skipIf(skip)('403 captcha_failed with reason hostname_mismatch when solved on another hostname', async () => {
    const err = await refused(t, 'acme', 403, 'captcha_failed', body({ turnstile_token: ts.issue('evil.test') }));
    expect(err.details).toEqual({ reason: 'hostname_mismatch' });
    const sub = await refused(t, 'acme', 403, 'captcha_failed', body({ turnstile_token: ts.issue('example.com') }), {
      origin: 'https://shop.example.com',
    });
    expect(sub.details?.reason).toBe('hostname_mismatch');
  });

  it.skipIf(skip)(
    'without Origin the shared mobile widget is used (turnstile_key mail or absent), solved on our own widget page',
    async () => {
      expectAccepted(await send(t, 'acme', body({ turnstile_token: ts.issue('mailroom.test') }), {}));
      expect(ts.calls.at(-1)?.secret).toBe(SHARED_SECRET);
      expectAccepted(await send(t, 'acme', body({ turnstile_token: ts.issue('mailroom.test'), turnstile_key: 'mail' }), {}));
      expect(ts.calls.at(-1)?.secret).toBe(SHARED_SECRET);
      const err = await refused(t, 'acme', 403, 'captcha_failed', body({ turnstile_token: ts.issue('elsewhere.test') }), {});
      expect(err.details?.reason).toBe('hostname_mismatch');
    },
  );

  it.skipIf(skip)("without Origin, turnstile_key org uses the organization's widget, solved on one of its origins", async () => {
    expectAccepted(await send(t, 'acme', body({ turnstile_token: ts.issue('app.example.com'), turnstile_key: 'org' }), {}));
    expect(ts.calls.at(-1)?.secret).toBe('secret-acme');
    expect(
      (
        await refused(
          t,
          'acme',
          403,
          'captcha_failed',
          body({ turnstile_token: ts.issue('mailroom.test'), turnstile_key: 'org' }),
          {},
        )
      ).details?.reason,
    ).toBe('hostname_mismatch');
    // With an Origin header the organization's widget is used whatever turnstile_key says.
    expectAccepted(await send(t, 'acme', body({ turnstile_token: ts.issue('example.com'), turnstile_key: 'mail' })));
    expect(ts.calls.at(-1)?.secret).toBe('secret-acme');
  });

  it.skipIf(skip)('the shared widget is refused when the organization does not allow mobile apps', async () => {
    const err = await refused(t, 'nomobile', 403, 'captcha_failed', body({ turnstile_token: ts.issue('mailroom.test') }), {
      referer: 'https://example.com/contact',
    });
    expect(err.details?.reason).toBe('shared_widget_not_allowed');
    // Its own widget from the same page works.
    expectAccepted(
      await send(t, 'nomobile', body({ turnstile_token: ts.issue('example.com'), turnstile_key: 'org' }), {
        referer: 'https://example.com/contact',
      }),
    );
  });

  it.skipIf(skip)(
    '403 captcha_not_configured without organization keys, with a secret the verifier refuses, and without a shared widget',
    async () => {
      expect(
        (await refused(t, 'nokeys', 403, 'captcha_not_configured', body({ turnstile_token: ts.issue('example.com') }))).details
          ?.reason,
      ).toBe('no_organization_keys');
      expect((await refused(t, 'nokeys', 403, 'captcha_not_configured', body())).details?.reason).toBe('no_organization_keys');
      expect(
        (await refused(t, 'badsecret', 403, 'captcha_not_configured', body({ turnstile_token: ts.issue('example.com') }))).details
          ?.reason,
      ).toBe('invalid_secret');
      // The production app has no MAILROOM_TURNSTILE_SECRET_KEY.
      expect(
        (await refused(prod, 'acme', 403, 'captcha_not_configured', body({ turnstile_token: ts.issue('mailroom.test') }), {}))
          .details?.reason,
      ).toBe('no_shared_widget');
    },
  );

  it.skipIf(skip)("Cloudflare's test secrets work in development and are refused in production", async () => {
    expectAccepted(await send(t, 'testkeys', body({ turnstile_token: 'XXXX.DUMMY.TOKEN.XXXX' })));
    expect(
      (await refused(t, 'failkeys', 403, 'captcha_failed', body({ turnstile_token: 'XXXX.DUMMY.TOKEN.2' }))).details?.reason,
    ).toBe('invalid_token');
    const calls = ts.calls.length;
    const err = await refused(prod, 'testkeys', 403, 'captcha_not_configured', body({ turnstile_token: 'XXXX.DUMMY.TOKEN.3' }));
    expect(err.details).toMatchObject({ reason: 'test_secret' });
    expect(ts.calls.length).toBe(calls);
    // Real keys in production are fine.
    expectAccepted(await send(prod, 'acme', body({ turnstile_token: ts.issue('example.com') })));
  });

  it.skipIf(skip)('a slow verifier gives 503 service_unavailable, never an accepted send', async () => {
    const token = ts.issue('example.com');
    ts.mode = 'slow';
    ts.delayMs = 1500;
    try {
      const before = await snapshot(t, 'acme');
      const res = await send(t, 'acme', body({ turnstile_token: token }));
      const err = expectError(res, 503, 'service_unavailable');
      expect(err.details?.reason).toBe('captcha_verifier_unavailable');
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect(await snapshot(t, 'acme')).toEqual(before);
    } finally {
      ts.mode = 'normal';
    }
    // The slow answer marked the token used at the fake Cloudflare; a fresh one goes through.
    expectAccepted(await send(t, 'acme', body({ turnstile_token: ts.issue('example.com') })));
  });

  it.skipIf(skip)('a verifier that fails (500, internal-error) gives 503 and the token stays usable', async () => {
    const token = ts.issue('example.com');
    for (const mode of ['error', 'internal'] as const) {
      ts.mode = mode;
      try {
        expectError(await send(t, 'acme', body({ turnstile_token: token })), 503, 'service_unavailable');
      } finally {
        ts.mode = 'normal';
      }
    }
    expectAccepted(await send(t, 'acme', body({ turnstile_token: token })));
  });

  it.skipIf(skip)('an unreachable verifier gives 503', async () => {
    const down = await freshApp(dialect, {
      MAILROOM_TURNSTILE_VERIFY_URL: await deadUrl(),
      MAILROOM_TURNSTILE_TIMEOUT_MS: '1000',
    });
    try {
      await seedOrg(down.store, org('acme'));
      expect(
        (await refused(down, 'acme', 503, 'service_unavailable', body({ turnstile_token: ts.issue('example.com') }))).details
          ?.reason,
      ).toBe('captcha_verifier_unavailable');
    } finally {
      await down.cleanup();
    }
  });

  it.skipIf(skip)('an idempotent retry of an accepted send answers before the CAPTCHA check', async () => {
    const payload = body({ turnstile_token: ts.issue('example.com') });
    const headers = { origin: ORIGIN, 'idempotency-key': `captcha-retry-${dialect}` };
    const first = expectAccepted(await send(t, 'acme', payload, headers));
    const calls = ts.calls.length;
    const again = expectAccepted(await send(t, 'acme', payload, headers));
    expect(again.message_id).toBe(first.message_id);
    expect(ts.calls.length).toBe(calls);
  });

  it.skipIf(skip)('failed CAPTCHA checks do not count toward the plan limit', async () => {
    t.clock.advance(1000);
    for (let i = 0; i < 6; i++) expectError(await send(t, 'free', body({ turnstile_token: `bad-${i}` })), 403, 'captcha_failed');
    for (let i = 0; i < 4; i++) expectError(await send(t, 'free', body()), 403, 'captcha_required');
    // Free: 2 per second, both still available.
    expectAccepted(await send(t, 'free', body({ turnstile_token: ts.issue('example.com') })));
    expectAccepted(await send(t, 'free', body({ turnstile_token: ts.issue('example.com') })));
    expectError(await send(t, 'free', body({ turnstile_token: ts.issue('example.com') })), 429, 'rate_limited');
  });

  it.skipIf(skip)('GET /v1/public-config gives the shared site key and the widget page, which renders that key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/public-config' });
    expect(res.statusCode).toBe(200);
    const cfg = res.json<{ turnstile_site_key: string; turnstile_widget_url: string }>();
    expect(cfg.turnstile_site_key).toBe('shared-site-key');
    expect(cfg.turnstile_widget_url).toBe('http://mailroom.test/widget/turnstile');
    const page = await t.app.inject({ method: 'GET', url: new URL(cfg.turnstile_widget_url).pathname });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('"shared-site-key"');
    expect(page.body).toContain('challenges.cloudflare.com/turnstile');
  });
});
