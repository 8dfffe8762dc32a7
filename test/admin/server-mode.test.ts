import { describe, expect, it } from 'vitest';
import { modeBanner, modeSummary } from '../../src/config/mode.js';
import { freshAppEach, testConfig, type TestApp } from '../support/app.js';
import { expectError } from '../support/http.js';
import { admin } from '../support/admin.js';

/**
 * Issue 25 §7: `npm start` runs development mode; the start banner and the operator UI's header
 * (GET /admin/v1/server) say which mode runs and what it relaxes, from one list.
 */
describe('which mode runs, and what it relaxes', () => {
  it('development names each relaxation and how to leave it; production names none', () => {
    const dev = modeSummary(testConfig());
    expect(dev.mode).toBe('development');
    expect(dev.relaxed).toEqual([
      'webhook URLs may use http and reach loopback (private, link-local and metadata addresses stay refused)',
      "Cloudflare's CAPTCHA test secrets are accepted",
      "the operator UI's session cookie is sent over plain http (not Secure)",
      'a demo organization with keys is created on a first start with an empty database',
    ]);
    const banner = modeBanner(dev);
    expect(banner[0]).toBe('mode: development (MAILROOM_ENV), which relaxes:');
    expect(banner.at(-1)).toBe('  set MAILROOM_ENV=production on a server others can reach');
    expect(
      modeBanner(modeSummary(testConfig({ MAILROOM_ENV: 'production', MAILROOM_BASE_URL: 'https://mail.example.com' }))),
    ).toEqual(['mode: production']);
  });

  it('MAILROOM_WEBHOOK_ALLOW_PRIVATE=true is named in either mode', () => {
    const prod = modeSummary(testConfig({ MAILROOM_ENV: 'production', MAILROOM_WEBHOOK_ALLOW_PRIVATE: 'true' }));
    expect(prod.relaxed).toEqual([expect.stringContaining('MAILROOM_WEBHOOK_ALLOW_PRIVATE=true')]);
    expect(modeSummary(testConfig({ MAILROOM_WEBHOOK_ALLOW_PRIVATE: 'true' })).relaxed[0]).toMatch(
      /any address, private, link-local and metadata ones included/,
    );
  });

  describe('GET /admin/v1/server', () => {
    let t!: TestApp;
    freshAppEach('sqlite', false, (app) => {
      t = app;
    });

    it('answers the summary to an operator, and nothing without the token', async () => {
      const res = await admin(t, 'GET', '/server');
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual(modeSummary(t.config));
      expectError(await admin(t, 'GET', '/server', undefined, null), 401, 'unauthorized');
    });
  });
});
