import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { freshAppAll, type TestApp } from '../support/app.js';
import { CONTACT_TEMPLATE, seedOrg } from '../support/seed.js';
import { CONTACT_PARAMS } from '../support/send.js';
import { keysOf, orgsLike, ORIGIN, pkOf, skOf } from '../support/orgs.js';
import { expectAccepted, expectError, expectLimited } from '../support/http.js';
import { snapshot } from '../support/stored.js';
import { describeDialects } from '../support/dialects.js';

/** Request rate limits (spec, Limits) through POST /v1/send, on the memory store and the injected clock. */

const SECOND = 1000;

const org = orgsLike((id) => ({
  credits: 10_000,
  keys: keysOf(id, 2, 2),
  // `dynamic` sends to a parameter without CAPTCHA: no public key may use it (rule 10).
  templates: [CONTACT_TEMPLATE, { ...CONTACT_TEMPLATE, id: 'dynamic', to: '{{email}}', allow_dynamic_recipients: true }],
}));

const body = (extra: Record<string, unknown> = {}) => ({ template_id: 'contact', template_params: CONTACT_PARAMS, ...extra });

describeDialects('request rate limits on %s', (dialect, skip) => {
  let t: TestApp;

  freshAppAll(dialect, skip, async (app) => {
    t = app;
    await seedOrg(t.store, org('free', { plan: 'free' }));
    await seedOrg(t.store, org('starter', { plan: 'starter' }));
    await seedOrg(t.store, org('pro', { plan: 'pro' }));
    await seedOrg(t.store, org('iplimited', {}, { ip_limit: { requests: 3, per_seconds: 60 } }));
    await seedOrg(t.store, org('defaultip', {}, { ip_limit: { requests: 10, per_seconds: 60 } }));
  });
  // Every test starts in a fresh one-minute window.
  afterEach(() => {
    if (!skip) t.clock.set((Math.floor(t.clock.now() / 60_000) + 1) * 60_000);
  });

  const send = (
    headers: Record<string, string>,
    extra: Partial<InjectOptions> = {},
    payload: Record<string, unknown> = body(),
  ): Promise<LightMyRequestResponse> => t.app.inject({ method: 'POST', url: '/v1/send', payload, headers, ...extra });
  const pub = (key: string, extra: Record<string, string> = {}) => ({ 'x-mail-public-key': key, origin: ORIGIN, ...extra });
  const priv = (key: string) => ({ authorization: `Bearer ${key}` });

  /** A 429 that stored nothing and used no credit. */
  async function limited(
    orgId: string,
    scope: string,
    headers: Record<string, string>,
    extra: Partial<InjectOptions> = {},
  ): Promise<number> {
    const before = await snapshot(t, orgId);
    const retryAfter = expectLimited(await send(headers, extra), scope);
    expect(await snapshot(t, orgId)).toEqual(before);
    return retryAfter;
  }

  describe('plan limits (fixed one-second windows)', () => {
    it.skipIf(skip)('per key: Free allows 2 requests per second, the third waits for the next second', async () => {
      expectAccepted(await send(priv(skOf('free'))));
      expectAccepted(await send(priv(skOf('free'))));
      expect(await limited('free', 'key', priv(skOf('free')))).toBe(1);
      t.clock.advance(SECOND);
      expectAccepted(await send(priv(skOf('free'))));
    });

    it.skipIf(skip)('Retry-After counts to the end of the window', async () => {
      t.clock.advance(250);
      for (let i = 0; i < 5; i++) expectAccepted(await send(priv(skOf('starter'))));
      expect(await limited('starter', 'key', priv(skOf('starter')))).toBe(1);
    });

    it.skipIf(skip)('per organization: all keys share the plan limit, public and private together', async () => {
      expectAccepted(await send(priv(skOf('free'))));
      expectAccepted(await send(pub(pkOf('free'))));
      await limited('free', 'plan', priv(skOf('free', 2)));
      await limited('free', 'plan', pub(pkOf('free', 2)));
      t.clock.advance(SECOND);
      expectAccepted(await send(pub(pkOf('free', 2))));
    });

    it.skipIf(skip)('Pro allows 20 per second for one key', async () => {
      const statuses = await Promise.all(Array.from({ length: 25 }, () => send(priv(skOf('pro'))).then((r) => r.statusCode)));
      expect(statuses.filter((s) => s === 202)).toHaveLength(20);
      expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    });

    it.skipIf(skip)('a replay of a completed idempotent request is free', async () => {
      const headers = { ...priv(skOf('free')), 'idempotency-key': `free-replay-${dialect}` };
      const first = expectAccepted(await send(headers));
      for (let i = 0; i < 5; i++) expect(expectAccepted(await send(headers)).message_id).toBe(first.message_id);
      expectAccepted(await send(priv(skOf('free'))));
      await limited('free', 'key', priv(skOf('free')));
    });

    it.skipIf(skip)('a request refused by the limit leaves its idempotency key free for the retry', async () => {
      expectAccepted(await send(priv(skOf('free'))));
      expectAccepted(await send(priv(skOf('free'))));
      const headers = { ...priv(skOf('free')), 'idempotency-key': `free-after-429-${dialect}` };
      expectLimited(await send(headers), 'key');
      t.clock.advance(SECOND);
      expectAccepted(await send(headers));
    });
  });

  describe('per client IP (public keys)', () => {
    it.skipIf(skip)('the organization setting: 3 per 60 s here; other addresses and private keys are not affected', async () => {
      for (let i = 0; i < 3; i++) expectAccepted(await send(pub(pkOf('iplimited'))));
      const retryAfter = await limited('iplimited', 'ip', pub(pkOf('iplimited')));
      expect(retryAfter).toBe(60);
      // The same address with another key of the organization: still this address.
      await limited('iplimited', 'ip', pub(pkOf('iplimited', 2)));
      expectAccepted(await send(pub(pkOf('iplimited')), { remoteAddress: '198.51.100.9' }));
      expectAccepted(await send(priv(skOf('iplimited'))));
      t.clock.advance(60 * SECOND);
      expectAccepted(await send(pub(pkOf('iplimited'))));
    });

    it.skipIf(skip)('the default is 10 per 60 seconds', async () => {
      for (let i = 0; i < 10; i++) {
        expectAccepted(await send(pub(pkOf('defaultip'))));
        t.clock.advance(50);
      }
      await limited('defaultip', 'ip', pub(pkOf('defaultip')));
    });

    it.skipIf(skip)('IPv6 clients are counted per /64 network', async () => {
      const a = { remoteAddress: '2001:db8:aa:1::1' };
      expectAccepted(await send(pub(pkOf('iplimited')), a));
      expectAccepted(await send(pub(pkOf('iplimited')), { remoteAddress: '2001:db8:aa:1:ffff:ffff:ffff:fffe' }));
      expectAccepted(await send(pub(pkOf('iplimited')), { remoteAddress: '2001:0db8:00aa:0001:1234::5' }));
      await limited('iplimited', 'ip', pub(pkOf('iplimited')), { remoteAddress: '2001:db8:aa:1::77' });
      // The neighbouring /64 is another client.
      expectAccepted(await send(pub(pkOf('iplimited')), { remoteAddress: '2001:db8:aa:2::1' }));
    });

    it.skipIf(skip)('X-Forwarded-For is ignored without MAILROOM_TRUST_PROXY', async () => {
      for (let i = 0; i < 3; i++) expectAccepted(await send(pub(pkOf('iplimited'), { 'x-forwarded-for': `203.0.113.${i + 1}` })));
      await limited('iplimited', 'ip', pub(pkOf('iplimited'), { 'x-forwarded-for': '203.0.113.50' }));
    });
  });

  describe('flood guard (public-key requests that fail before the template and CAPTCHA checks)', () => {
    it.skipIf(skip)('such failures count toward no plan, key or IP limit', async () => {
      for (let i = 0; i < 30; i++)
        expectError(await send(pub(pkOf('free')), {}, body({ template_id: 'nope' })), 404, 'template_not_found');
      for (let i = 0; i < 5; i++)
        expectError(await send(pub(pkOf('iplimited')), {}, body({ template_id: 'nope' })), 404, 'template_not_found');
      expectAccepted(await send(pub(pkOf('free'))));
      expectAccepted(await send(pub(pkOf('free'))));
      expectAccepted(await send(pub(pkOf('iplimited'))));
    });

    it.skipIf(skip)(
      'a refusal after the template lookup on a template without CAPTCHA counts (rule 3: it passed both checks)',
      async () => {
        for (let i = 0; i < 3; i++) {
          expectError(
            await send(pub(pkOf('iplimited')), {}, body({ template_id: 'dynamic' })),
            403,
            'dynamic_recipient_requires_captcha',
          );
        }
        await limited('iplimited', 'ip', pub(pkOf('iplimited')));
      },
    );

    it.skipIf(skip)('429 scope flood after 50 public-key requests of an organization in one second, failing or not', async () => {
      for (let i = 0; i < 45; i++)
        expectError(await send(pub(pkOf('free')), {}, body({ template_id: 'nope' })), 404, 'template_not_found');
      for (let i = 0; i < 5; i++)
        expectError(await send(pub(pkOf('free'), { origin: 'https://evil.test' })), 403, 'origin_not_allowed');
      await limited('free', 'flood', pub(pkOf('free')));
      // Private keys are not held by the flood guard.
      expectAccepted(await send(priv(skOf('free'))));
      t.clock.advance(SECOND);
      expectAccepted(await send(pub(pkOf('free'))));
    });
  });
});

describeDialects('flood guard, trusted proxies and anomaly detection settings on %s', (dialect, skip) => {
  let t: TestApp;

  freshAppAll(
    dialect,
    skip,
    async (app) => {
      t = app;
      await seedOrg(t.store, org('iplimited', {}, { ip_limit: { requests: 2, per_seconds: 60 } }));
      await seedOrg(t.store, org('flood', { plan: 'free' }));
      await seedOrg(t.store, org('quiet'));
      await seedOrg(t.store, org('busy'));
    },
    {
      MAILROOM_TRUST_PROXY: '127.0.0.1',
      MAILROOM_FLOOD_GUARD_PER_SECOND: '60',
      MAILROOM_ANOMALY_MIN_REQUESTS: '8',
      MAILROOM_ANOMALY_FACTOR: '3',
      MAILROOM_ANOMALY_COOLDOWN_SECONDS: '20',
    },
  );

  const send = (headers: Record<string, string>, extra: Partial<InjectOptions> = {}, payload: Record<string, unknown> = body()) =>
    t.app.inject({ method: 'POST', url: '/v1/send', payload, headers, ...extra });
  const pub = (key: string, extra: Record<string, string> = {}) => ({ 'x-mail-public-key': key, origin: ORIGIN, ...extra });

  it.skipIf(skip)('X-Forwarded-For from a trusted proxy names the client; from anyone else it is ignored', async () => {
    t.clock.set(Date.UTC(2026, 3, 1, 0, 0, 0));
    const via = (client: string, extra: Partial<InjectOptions> = {}) =>
      send(pub(pkOf('iplimited'), { 'x-forwarded-for': client }), extra);
    expectAccepted(await via('203.0.113.1'));
    expectAccepted(await via('203.0.113.1'));
    expectLimited(await via('203.0.113.1'), 'ip');
    expectAccepted(await via('203.0.113.2'));
    // A chain: the right-most address not added by a trusted proxy is the client.
    expectAccepted(await via('10.0.0.1, 203.0.113.2'));
    expectLimited(await via('10.0.0.9, 203.0.113.2'), 'ip');
    // An untrusted peer cannot pick its address with the header.
    expectAccepted(await via('203.0.113.3', { remoteAddress: '192.0.2.77' }));
    expectAccepted(await via('203.0.113.4', { remoteAddress: '192.0.2.77' }));
    expectLimited(await via('203.0.113.5', { remoteAddress: '192.0.2.77' }), 'ip');
  });

  it.skipIf(skip)('MAILROOM_FLOOD_GUARD_PER_SECOND sets the flood guard', async () => {
    t.clock.set(Date.UTC(2026, 3, 1, 1, 0, 0));
    for (let i = 0; i < 60; i++)
      expectError(await send(pub(pkOf('flood')), {}, body({ template_id: 'nope' })), 404, 'template_not_found');
    expectLimited(await send(pub(pkOf('flood'))), 'flood');
  });

  it.skipIf(skip)(
    'a sudden spike slows the organization to one public-key request every 2 seconds until the spike passes',
    async () => {
      t.clock.set(Date.UTC(2026, 3, 1, 2, 0, 0));
      // A quiet baseline: one request a minute for ten minutes.
      for (let m = 0; m < 10; m++) {
        expectAccepted(await send(pub(pkOf('quiet'))));
        t.clock.advance(60_000);
      }
      // Threshold: max(8, 3 × 10/60 per 10 s) = 8 requests in one 10-second window; the 8th is
      // the spike and the one request of its 2 seconds, the 9th waits.
      for (let i = 0; i < 8; i++) expectAccepted(await send(pub(pkOf('quiet')), { remoteAddress: `198.51.100.${i + 1}` }));
      const before = await snapshot(t, 'quiet');
      const res = await send(pub(pkOf('quiet')), { remoteAddress: '198.51.100.200' });
      const retryAfter = expectLimited(res, 'anomaly');
      expect(retryAfter).toBeLessThanOrEqual(2);
      expect(await snapshot(t, 'quiet')).toEqual(before);
      // Private keys of the organization are not slowed.
      expectAccepted(await send({ authorization: `Bearer ${skOf('quiet')}` }));
      // One request per 2-second window passes while the flood goes on.
      for (let s = 0; s < 4; s++) {
        t.clock.advance(2000);
        expectAccepted(await send(pub(pkOf('quiet'))));
        expectLimited(await send(pub(pkOf('quiet'))), 'anomaly');
        expectLimited(await send(pub(pkOf('quiet'))), 'anomaly');
      }
      // The flood stops: 20 s after the last spiky 10-second window, requests flow again.
      t.clock.advance(10_000);
      expectAccepted(await send(pub(pkOf('quiet'))));
      expectLimited(await send(pub(pkOf('quiet'))), 'anomaly');
      t.clock.advance(20_000);
      for (let i = 0; i < 5; i++) expectAccepted(await send(pub(pkOf('quiet'))));
    },
  );

  it.skipIf(skip)('the same burst is no spike for an organization whose usual rate is that high', async () => {
    t.clock.set(Date.UTC(2026, 3, 1, 3, 0, 0));
    // 18 per minute for ten minutes: 3 per 10 s on average; a spike is more than 3 × 3 = 9.
    for (let m = 0; m < 10; m++) {
      for (let i = 0; i < 18; i++) {
        expectAccepted(await send(pub(pkOf('busy'))));
        t.clock.advance(3000);
      }
      t.clock.advance(6000);
    }
    t.clock.set((Math.floor(t.clock.now() / 10_000) + 1) * 10_000);
    // 9 in one window is usual here; the 10th is a spike (and still the one request of its 2 seconds).
    for (let i = 0; i < 10; i++) expectAccepted(await send(pub(pkOf('busy'))));
    expectLimited(await send(pub(pkOf('busy'))), 'anomaly');
  });
});
