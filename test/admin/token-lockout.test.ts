import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { loadConfig } from '../../src/config/env.js';
import { ADMIN_TOKEN, freshAppEach, type TestApp } from '../support/app.js';
import { expectError } from '../support/http.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Issue 25 §7: after 5 wrong admin tokens from an address, the right one was refused for 15
 * minutes too; behind a proxy MAILROOM_TRUST_PROXY does not name, every client is one address,
 * so one person's typos (or anyone on the internet) locked every operator out. Now the right
 * token always passes, wrong ones are still throttled, and the token must be 32 characters.
 */
describeDialects('the admin token after wrong ones on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const bearer = (token: string, ip: string) =>
    t.app.inject({
      method: 'GET',
      url: '/admin/v1/organizations',
      headers: { authorization: `Bearer ${token}` },
      remoteAddress: ip,
    });
  const signIn = (token: string, ip: string) =>
    t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { token }, remoteAddress: ip });

  it.skipIf(skip)('accepts the right token from an address that sent 5 wrong ones, by bearer and at sign-in', async () => {
    const ip = '198.51.100.7';
    for (let i = 0; i < 5; i++) expectError(await bearer(`wrong-admin-token-${i}-0123456789abcdef`, ip), 401, 'unauthorized');
    const right = await bearer(ADMIN_TOKEN, ip);
    expect(right.statusCode, right.body).toBe(200);
    const session = await signIn(ADMIN_TOKEN, ip);
    expect(session.statusCode, session.body).toBe(200);
    expect(session.headers['set-cookie']).toContain('mailroom_session=');
  });

  it.skipIf(skip)(
    'still throttles wrong tokens from that address (429, Retry-After), and the right one does not reset the count',
    async () => {
      const ip = '198.51.100.8';
      for (let i = 0; i < 5; i++) expectError(await signIn(`wrong-${i}`, ip), 401, 'unauthorized');
      const limited = await bearer('wrong-again-wrong-again-wrong-again', ip);
      expectError(limited, 429, 'rate_limited');
      expect(Number(limited.headers['retry-after'])).toBe(15 * 60);
      expect((await bearer(ADMIN_TOKEN, ip)).statusCode).toBe(200);
      expectError(await signIn('wrong-after-right', ip), 429, 'rate_limited');
      // Another address has its own count.
      expectError(await signIn('wrong-elsewhere', '198.51.100.9'), 401, 'unauthorized');
    },
  );
});

describe('MAILROOM_ADMIN_TOKEN length', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a token under 32 characters stops `mailroom serve` with a message naming the variable, the rule and the fix', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-token-'));
    dirs.push(dir);
    const err: string[] = [];
    const out: string[] = [];
    const code = await main(
      ['serve'],
      { MAILROOM_DATA_DIR: dir, MAILROOM_ADMIN_TOKEN: 'a'.repeat(31), MAILROOM_PORT: '0' },
      (l) => out.push(l),
      (l) => err.push(l),
    );
    expect(code).not.toBe(0);
    expect(err.join('\n')).toContain('MAILROOM_ADMIN_TOKEN must be at least 32 characters, it has 31');
    expect(err.join('\n')).toContain('openssl rand -hex 24');
    expect(out.join('\n')).not.toContain('listening');
  });

  it('32 characters are enough; unset still means no admin API', () => {
    expect(loadConfig({ MAILROOM_ADMIN_TOKEN: 'b'.repeat(32) }).adminToken).toBe('b'.repeat(32));
    expect(() => loadConfig({ MAILROOM_ADMIN_TOKEN: 'the-old-minimum-16-chars' })).toThrow(
      /MAILROOM_ADMIN_TOKEN must be at least 32 characters/,
    );
    expect(loadConfig({}).adminToken).toBeUndefined();
  });
});
