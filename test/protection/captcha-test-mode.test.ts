import { afterAll, beforeAll, expect, it } from 'vitest';
import { TURNSTILE_TEST_TOKEN } from '../../src/protection/captcha.js';
import { freshApp, type TestApp } from '../support/app.js';
import { CONTACT_PARAMS } from '../support/send.js';
import { org, ORIGIN, PROTECTED_TEMPLATE, pkOf } from '../support/orgs.js';
import { startTurnstile, type FakeTurnstile } from '../support/turnstile.js';
import { expectAccepted, expectError } from '../support/http.js';
import { describeDialects } from '../support/dialects.js';
import { seedOrg } from '../support/seed.js';

/**
 * Cloudflare's dummy token with a test key (issue 27 §2): passes without a widget lookup, a
 * single-use claim or siteverify, in production too (nothing a test key sends leaves). Any other
 * token, or any live key, takes the normal path.
 */

const TEST_PK = 'pk_test_acme_0123456789abcdef012345';
const body = (token?: string) => ({
  template_id: 'protected',
  template_params: CONTACT_PARAMS,
  ...(token === undefined ? {} : { turnstile_token: token }),
});

describeDialects('CAPTCHA dummy token with a test key on %s', (dialect, skip) => {
  let prod: TestApp;
  let ts: FakeTurnstile;

  beforeAll(async () => {
    if (skip) return;
    ts = await startTurnstile(['secret-acme']);
    prod = await freshApp(dialect, { MAILROOM_ENV: 'production', MAILROOM_TURNSTILE_VERIFY_URL: ts.url });
    await seedOrg(
      prod.store,
      org('acme', { captcha: { site_key: 'site-acme', secret_key: 'secret-acme' }, templates: [PROTECTED_TEMPLATE] }),
    );
    await prod.store.keys.insert('acme', 'public', prod.clock.now(), TEST_PK, 'test');
  });
  afterAll(async () => {
    if (skip) return;
    await prod.cleanup();
    await ts.close();
  });

  const send = (key: string, token?: string) =>
    prod.app.inject({
      method: 'POST',
      url: '/v1/send',
      payload: body(token),
      headers: { 'x-mail-public-key': key, origin: ORIGIN },
    });

  it.skipIf(skip)('passes with a test key in production, again and again, without asking siteverify', async () => {
    const calls = ts.calls.length;
    for (let i = 0; i < 3; i++) expectAccepted(await send(TEST_PK, TURNSTILE_TEST_TOKEN));
    expectAccepted(await send(TEST_PK, ` ${TURNSTILE_TEST_TOKEN} `));
    expect(ts.calls.length).toBe(calls);
  });

  it.skipIf(skip)('a live key with the dummy token takes the normal path: siteverify refuses it', async () => {
    const calls = ts.calls.length;
    expectError(await send(pkOf('acme'), TURNSTILE_TEST_TOKEN), 403, 'captcha_failed');
    expect(ts.calls.length).toBe(calls + 1);
  });

  it.skipIf(skip)('a test key without a token is captcha_required; another token is verified', async () => {
    expectError(await send(TEST_PK), 403, 'captcha_required');
    const calls = ts.calls.length;
    expectAccepted(await send(TEST_PK, ts.issue('example.com')));
    expect(ts.calls.length).toBe(calls + 1);
  });
});
