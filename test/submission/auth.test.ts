import { expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/apply.js';
import { revokeKey } from '../../src/admin/keys.js';
import { buildApp } from '../../src/app.js';
import { buildServices } from '../../src/cli/runtime.js';
import { ManualClock } from '../../src/domain/clock.js';
import { SignInLimiter } from '../../src/protection/sign-in-limiter.js';
import { testConfig } from '../support/app.js';
import { closerPerTest } from '../support/cleanup.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';
import { keysOf, org, pkOf, skOf } from '../support/orgs.js';
import { b64, dialogue, plain, startSubmissionFor, stubPipeline } from '../support/submission.js';

const TEST_KEY = 'sk_test_beta_mode_1';

/**
 * AUTH PLAIN and LOGIN (issue 28): username = organization id, password = one of its private
 * keys (live or test); anything else is 535 5.7.8 and counts toward the per-address lockout
 * the admin token's wrong guesses count toward (one SignInLimiter per process, L3).
 */
describeDialects('SMTP submission AUTH on %s', (dialect, skip) => {
  const c = closerPerTest();
  const t = freshStoreEach(dialect, skip, (s) =>
    applyConfig(s.store, {
      organizations: [org('acme'), org('beta', { keys: [...keysOf('beta'), { type: 'private', key: TEST_KEY, mode: 'test' }] })],
    }),
  );

  const started = () => startSubmissionFor({ ...t, closer: c, pipeline: stubPipeline() });
  const authPlain = async (port: number, user: string, pass: string) => {
    const d = await dialogue(port, c);
    await d.command('EHLO client.test');
    return (await d.command(`AUTH PLAIN ${plain(user, pass)}`))[0];
  };

  it.skipIf(skip)('PLAIN and LOGIN with a live or a test private key of the organization: 235 2.7.0', async () => {
    const s = await started();
    expect(await authPlain(s.listener.port, 'acme', skOf('acme'))).toBe('235 2.7.0 Authentication successful');
    expect(await authPlain(s.listener.port, 'beta', TEST_KEY)).toBe('235 2.7.0 Authentication successful');
    const d = await dialogue(s.listener.port, c);
    await d.command('EHLO client.test');
    expect((await d.command('AUTH LOGIN'))[0]).toBe(`334 ${b64('Username:')}`);
    expect((await d.command(b64('acme')))[0]).toBe(`334 ${b64('Password:')}`);
    expect((await d.command(b64(skOf('acme'))))[0]).toBe('235 2.7.0 Authentication successful');
    expect((await d.command('MAIL FROM:<a@acme.test>'))[0]).toMatch(/^250 2\.1\.0 /);
  });

  it.skipIf(skip)('wrong key, key of another org, public key, revoked key: 535 5.7.8', async () => {
    const s = await started();
    const revoked = (await t.store.keys.list('beta')).find((k) => k.type === 'private' && k.mode === 'live');
    if (revoked === undefined) throw new Error('no live private key of beta');
    await revokeKey(t.store, 'beta', revoked.id);
    const bad: Array<[string, string]> = [
      ['acme', 'sk_acme_private_99'],
      ['acme', skOf('beta')],
      ['beta', skOf('acme')],
      ['acme', pkOf('acme')],
      ['beta', skOf('beta')],
    ];
    // A fresh limiter per attempt would hide nothing: 5 wrong ones stay within the budget.
    for (const [user, pass] of bad)
      expect(await authPlain(s.listener.port, user, pass), `${user} ${pass}`).toBe(
        '535 5.7.8 Authentication credentials invalid',
      );
  });

  it.skipIf(skip)('6th wrong login from one address: 454 4.7.0; the right key still passes', async () => {
    const s = await started();
    for (let i = 0; i < 5; i++) expect(await authPlain(s.listener.port, 'acme', `sk_nope_${i}`)).toMatch(/^535 5\.7\.8 /);
    expect(await authPlain(s.listener.port, 'acme', 'sk_nope_6')).toMatch(
      /^454 4\.7\.0 Too many failed logins from this address; try again in \d+ seconds$/,
    );
    expect(await authPlain(s.listener.port, 'acme', skOf('acme'))).toBe('235 2.7.0 Authentication successful');
    t.clock.advance(15 * 60_000 + 1);
    expect(await authPlain(s.listener.port, 'acme', 'sk_nope_7')).toMatch(/^535 5\.7\.8 /);
  });

  it.skipIf(skip)('wrong SMTP logins and wrong admin tokens share one budget per address', async () => {
    const signIns = new SignInLimiter(t.clock);
    const config = testConfig();
    const services = buildServices(config, { store: t.store, clock: t.clock });
    const app = await buildApp({ ...services, config, signIns });
    c.defer(() => app.close());
    c.defer(() => services.close());
    const s = await startSubmissionFor({ ...t, closer: c, pipeline: stubPipeline(), signIns });
    const wrongAdmin = () =>
      app.inject({ method: 'POST', url: '/admin/v1/session', payload: { token: 'x'.repeat(40) }, remoteAddress: '127.0.0.1' });
    for (let i = 0; i < 3; i++) expect((await wrongAdmin()).statusCode).toBe(401);
    for (let i = 0; i < 2; i++) expect(await authPlain(s.listener.port, 'acme', `sk_nope_${i}`)).toMatch(/^535 5\.7\.8 /);
    expect((await wrongAdmin()).statusCode).toBe(429);
    expect(await authPlain(s.listener.port, 'acme', 'sk_nope_9')).toMatch(/^454 4\.7\.0 /);
  });
});

it('the limiter keys ::ffff:127.0.0.1 (HTTP or SMTP on ::) and 127.0.0.1 (on 0.0.0.0) as one client', () => {
  const limiter = new SignInLimiter(new ManualClock());
  for (let i = 0; i < 3; i++) expect(limiter.refuse('::ffff:127.0.0.1')).toBeUndefined();
  for (let i = 0; i < 2; i++) expect(limiter.refuse('127.0.0.1')).toBeUndefined();
  expect(limiter.refuse('127.0.0.1')).toBeGreaterThan(0);
  expect(limiter.retryAfterSeconds('::FFFF:127.0.0.1')).toBeGreaterThan(0);
  // Another client, and a plain IPv6 one, keep their own budgets.
  expect(limiter.retryAfterSeconds('127.0.0.2')).toBeUndefined();
  expect(limiter.refuse('::1')).toBeUndefined();
});
