import { createHash } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { revokeKey, rotateKey } from '../../src/admin/keys.js';
import { freshAppAll, freshApp, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Issue 11 §5: GET /widget/turnstile only hands a token to redirect targets the organization
 * allows (its app schemes, its allowed origins), refuses everything else with a script-free page,
 * and never builds script from the request.
 */

const NOMOBILE_KEY = 'pk_nomobile_public_1';
const BADSCHEME_KEY = 'pk_badscheme_public_1';
const REVOKED_KEY = 'pk_revoked_public_1';
const ROTATED_KEY = 'pk_rotated_public_1';

function widgetUrl(query: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) for (const v of [value].flat()) params.append(name, v);
  const qs = params.toString();
  return qs === '' ? '/widget/turnstile' : `/widget/turnstile?${qs}`;
}

/** The inline scripts of a page (the ones without src), in order. */
function inlineScripts(html: string): string[] {
  return [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map((m) => m[1] ?? '');
}

function csp(res: LightMyRequestResponse): Map<string, string> {
  const header = String(res.headers['content-security-policy'] ?? '');
  return new Map(
    header
      .split(';')
      .map((d) => d.trim())
      .filter((d) => d !== '')
      .map((d) => {
        const [name = '', ...rest] = d.split(/\s+/);
        return [name, rest.join(' ')];
      }),
  );
}

function expectHardened(res: LightMyRequestResponse): void {
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
  expect(res.headers['cache-control']).toBe('private, no-store');
  const policy = csp(res);
  expect(policy.get('default-src')).toBe("'none'");
  expect(policy.get('base-uri')).toBe("'none'");
  expect(policy.get('form-action')).toBe("'none'");
  expect(policy.get('frame-ancestors')).toBe("'none'");
}

/** A working page: the one inline script is the one the CSP's hash allows, with Cloudflare's. */
function expectWidgetPage(res: LightMyRequestResponse): { redirect: string; script: string } {
  expect(res.statusCode).toBe(200);
  expectHardened(res);
  const scripts = inlineScripts(res.body);
  expect(scripts).toHaveLength(1);
  const script = scripts[0] ?? '';
  const hash = createHash('sha256').update(script, 'utf8').digest('base64');
  expect(csp(res).get('script-src')).toBe(`'sha256-${hash}' https://challenges.cloudflare.com`);
  expect(csp(res).get('frame-src')).toBe('https://challenges.cloudflare.com');
  expect([...res.body.matchAll(/<script\b/gi)]).toHaveLength(2);
  expect(res.body).toContain(
    '<script src="https://challenges.cloudflare.com/turnstile/v0/api.js?onload=mrReady&amp;render=explicit" async ' +
      'defer></script>',
  );
  const redirect = /data-redirect-uri="([^"]*)"/.exec(res.body)?.[1];
  expect(redirect).toBeDefined();
  return { redirect: redirect ?? '', script };
}

/** A refusal: 400, plain HTML, no script of any kind, and a CSP that would block one anyway. */
function expectRefused(res: LightMyRequestResponse, text: string | RegExp): void {
  expect(res.statusCode).toBe(400);
  expectHardened(res);
  expect(res.body).not.toMatch(/<script|javascript:|\son\w+=/i);
  expect(csp(res).has('script-src')).toBe(false);
  expect(res.body).toMatch(text);
}

describeDialects('GET /widget/turnstile on %s', (dialect, skip) => {
  let t: TestApp;
  const get = (query: Record<string, string | string[]>) => t.app.inject({ method: 'GET', url: widgetUrl(query) });

  freshAppAll(
    dialect,
    skip,
    async (app) => {
      t = app;
      await seedOrg(t.store, {
        security: {
          allowed_origins: ['example.com', '*.example.com', 'localhost', 'dev.test:8443'],
          allow_mobile_apps: true,
          mobile_app_schemes: ['myapp', 'com.acme.app'],
        },
      });
      const other = (id: string, key: string, security: Record<string, unknown>) => ({
        id,
        name: id,
        plan: 'pro' as const,
        credits: 1,
        keys: [{ type: 'public' as const, key }],
        services: [],
        templates: [],
        security,
      });
      await seedOrg(
        t.store,
        other('nomobile', NOMOBILE_KEY, {
          allowed_origins: ['example.com'],
          allow_mobile_apps: false,
          mobile_app_schemes: ['myapp'],
        }),
      );
      // A mistaken configuration: schemes a browser runs itself are never app schemes.
      await seedOrg(
        t.store,
        other('badscheme', BADSCHEME_KEY, {
          allow_mobile_apps: true,
          mobile_app_schemes: ['javascript', 'data', 'vbscript', 'blob', 'file', 'https'],
        }),
      );
      await seedOrg(t.store, other('revoked', REVOKED_KEY, { allow_mobile_apps: true, mobile_app_schemes: ['myapp'] }));
      const revoked = await t.store.catalog.keyByValue(REVOKED_KEY);
      await revokeKey(t.store, 'revoked', revoked?.id ?? '');
      await seedOrg(t.store, other('rotated', ROTATED_KEY, { allow_mobile_apps: true, mobile_app_schemes: ['myapp'] }));
    },
    { MAILROOM_TURNSTILE_SITE_KEY: '0x4AAA"><b>site' },
  );

  describe('accepted', () => {
    it.skipIf(skip)('without a key or redirect: the bridge-only page, which never navigates', async () => {
      const page = expectWidgetPage(await get({}));
      expect(page.redirect).toBe('');
    });

    it.skipIf(skip)('a public key without redirect_uri', async () => {
      expect(expectWidgetPage(await get({ public_key: PUBLIC_KEY })).redirect).toBe('');
    });

    it.skipIf(skip)('an app scheme the organization names, by public_key or by user_id', async () => {
      expect(
        expectWidgetPage(await get({ public_key: PUBLIC_KEY, redirect_uri: 'myapp://captcha/done?state=42' })).redirect,
      ).toBe('myapp://captcha/done?state=42');
      expect(expectWidgetPage(await get({ user_id: PUBLIC_KEY, redirect_uri: 'com.acme.app:/oauth' })).redirect).toBe(
        'com.acme.app:/oauth',
      );
      expect(
        expectWidgetPage(await get({ public_key: PUBLIC_KEY, user_id: PUBLIC_KEY, redirect_uri: 'MyApp://x' })).redirect,
      ).toBe('myapp://x');
    });

    it.skipIf(skip)('an allowed origin over https (wildcards and ports as for sends), or http on localhost', async () => {
      const ok = async (uri: string, expected = uri) =>
        expect(expectWidgetPage(await get({ public_key: PUBLIC_KEY, redirect_uri: uri })).redirect).toBe(expected);
      await ok('https://example.com/cb');
      await ok('https://app.example.com/mobile/cb?x=1');
      await ok('https://dev.test:8443/cb');
      await ok('http://localhost:3000/cb');
      // The fragment is dropped: the page puts the token there.
      await ok('https://example.com/cb#old', 'https://example.com/cb');
    });

    it.skipIf(skip)('the redirect and the site key reach the page only as escaped attributes', async () => {
      const res = await get({ public_key: PUBLIC_KEY, redirect_uri: 'myapp://cb/\'x"y<z>?q="><script>alert(1)</script>' });
      const page = expectWidgetPage(res);
      expect(page.redirect).toBe('myapp://cb/&#39;x%22y%3Cz%3E?q=%22%3E%3Cscript%3Ealert(1)%3C/script%3E');
      expect(res.body).toContain('data-site-key="0x4AAA&quot;&gt;&lt;b&gt;site"');
      expect(res.body).not.toContain('<b>');
    });

    it.skipIf(skip)('the script is the same constant whatever the query says', async () => {
      const scripts = new Set([
        expectWidgetPage(await get({})).script,
        expectWidgetPage(await get({ public_key: PUBLIC_KEY, redirect_uri: 'myapp://a' })).script,
        expectWidgetPage(await get({ user_id: PUBLIC_KEY, redirect_uri: 'https://example.com/</script><script>alert(1)//' }))
          .script,
      ]);
      expect(scripts.size).toBe(1);
      const [script = ''] = [...scripts];
      expect(script).not.toMatch(/alert|example\.com|myapp|pk_/);
    });
  });

  describe('refused with a script-free error page', () => {
    const refused = async (query: Record<string, string | string[]>, text: string | RegExp) =>
      expectRefused(await get(query), text);
    const withKey = (redirect_uri: string, public_key = PUBLIC_KEY) => ({ public_key, redirect_uri });

    it.skipIf(skip)('javascript:, data:, vbscript:, blob:, file: and other script-ish schemes', async () => {
      for (const uri of [
        'javascript:alert(document.domain)//',
        'JaVaScRiPt:alert(1)',
        ' javascript:alert(1)',
        'java\tscript:alert(1)',
        'java\nscript:alert(1)',
        '\u0000javascript:alert(1)',
        'data:text/html,<script>alert(1)</script>',
        'vbscript:msgbox(1)',
        'blob:https://example.com/0b7c4f6e',
        'file:///etc/passwd',
        'about:blank',
        'otherapp://cb',
      ])
        await refused(withKey(uri), /is not one of the mobile app schemes|not an absolute URL/);
    });

    it.skipIf(skip)('even when the organization lists such a scheme by mistake', async () => {
      for (const uri of [
        'javascript:alert(1)//',
        'data:text/html,x',
        'vbscript:x',
        'blob:https://example.com/x',
        'file:///etc/passwd',
      ]) {
        await refused(withKey(uri, BADSCHEME_KEY), 'is not one of the mobile app schemes of the organization');
      }
      // https listed as an "app scheme" does not open every https origin.
      await refused(withKey('https://evil.test/cb', BADSCHEME_KEY), 'not on the allowed origins');
    });

    it.skipIf(skip)('an origin that is not allowed, however it is dressed up', async () => {
      for (const uri of [
        'https://evil.test/cb',
        'https://example.com.evil.test/cb',
        'https://evilexample.com/cb',
        'https://evil.test\\@example.com/cb',
        'https://dev.test:9443/cb',
        'https://localhost.evil.test/cb',
      ])
        await refused(withKey(uri), 'is not on the allowed origins of the organization');
      await refused(withKey('https://example.com@evil.test/cb'), 'must not carry a user name');
    });

    it.skipIf(skip)('http anywhere but localhost', async () => {
      await refused(withKey('http://example.com/cb'), 'must use https');
      await refused(withKey('http://localhost.evil.test/cb'), 'must use https');
    });

    it.skipIf(skip)('an app scheme when the organization does not allow mobile apps', async () => {
      await refused(withKey('myapp://cb', NOMOBILE_KEY), 'does not allow mobile apps');
    });

    it.skipIf(skip)('a relative or unparseable redirect, or an oversized one', async () => {
      await refused(withKey('//evil.test/cb'), 'not an absolute URL');
      await refused(withKey('/cb'), 'not an absolute URL');
      await refused(withKey(`myapp://cb?${'x'.repeat(3000)}`), 'too long');
    });

    it.skipIf(skip)('a redirect_uri without a key', async () => {
      await refused({ redirect_uri: 'myapp://cb' }, 'needs the public_key');
      await refused({ redirect_uri: 'javascript:alert(1)//' }, 'needs the public_key');
    });

    it.skipIf(skip)('an unknown, revoked or private key, with or without a redirect', async () => {
      for (const key of ['pk_no_such_key', REVOKED_KEY, PRIVATE_KEY, 'garbage']) {
        await refused(withKey('myapp://cb', key), 'Unknown or inactive public key');
        await refused({ public_key: key }, 'Unknown or inactive public key');
      }
      await refused({ user_id: 'pk_no_such_key', redirect_uri: 'myapp://cb' }, 'Unknown or inactive public key');
    });

    it.skipIf(skip)('a rotated key once its grace period is over (it works during it, as for sends)', async () => {
      const old = await t.store.catalog.keyByValue(ROTATED_KEY);
      await rotateKey(t.store, 'rotated', old?.id ?? '', 60);
      expect(expectWidgetPage(await get(withKey('myapp://cb', ROTATED_KEY))).redirect).toBe('myapp://cb');
      t.clock.advance(61_000);
      await refused(withKey('myapp://cb', ROTATED_KEY), 'Unknown or inactive public key');
    });

    it.skipIf(skip)('repeated or conflicting parameters', async () => {
      await refused({ public_key: PUBLIC_KEY, redirect_uri: ['myapp://cb', 'javascript:alert(1)'] }, 'more than once');
      await refused({ public_key: [PUBLIC_KEY, PUBLIC_KEY] }, 'more than once');
      await refused({ public_key: PUBLIC_KEY, user_id: NOMOBILE_KEY, redirect_uri: 'myapp://cb' }, 'different keys');
    });

    it.skipIf(skip)('the error page echoes none of the attacker text', async () => {
      const res = await get(withKey('https://evil.test/"><img src=x onerror=alert(1)><script>alert(1)</script>'));
      expectRefused(res, 'allowed origins');
      expect(res.body).not.toMatch(/evil|<img|alert/);
    });
  });
});

describe('GET /v1/public-config and the widget URL', () => {
  it('the URL is unchanged and its description tells apps which parameters to append', async () => {
    const t = await freshApp('sqlite');
    try {
      const cfg = (await t.app.inject({ method: 'GET', url: '/v1/public-config' })).json<{ turnstile_widget_url: string }>();
      expect(cfg.turnstile_widget_url).toBe('http://mailroom.test/widget/turnstile');
      const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{ paths: Record<string, unknown> }>();
      const text = JSON.stringify(doc.paths['/v1/public-config']);
      expect(text).toContain('?public_key=pk_…&redirect_uri=…');
      expect(text).toContain('mobile_app_schemes');
    } finally {
      await t.cleanup();
    }
  });
});
