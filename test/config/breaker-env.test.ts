import { describe, expect, it } from 'vitest';
import { buildServices } from '../../src/cli/runtime.js';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { testConfig } from '../support/app.js';
import { freshStore } from '../support/stores.js';

describe('MAILROOM_BREAKER_* (issue 14: "defaults 5 in 60 s", half-open after 30 s)', () => {
  it('defaults to 5 failures in 60 s, half-open after 30 s; each variable replaces its part', () => {
    expect(loadConfig({}, '/srv').breaker).toEqual({ failures: 5, windowMs: 60_000, halfOpenAfterMs: 30_000 });
    expect(
      loadConfig(
        {
          MAILROOM_BREAKER_FAILURES: '2',
          MAILROOM_BREAKER_WINDOW_SECONDS: '10',
          MAILROOM_BREAKER_HALF_OPEN_SECONDS: '3',
        },
        '/srv',
      ).breaker,
    ).toEqual({ failures: 2, windowMs: 10_000, halfOpenAfterMs: 3_000 });
  });

  it('refuses a value that is not a whole number in range, naming the variable', () => {
    expect(() => loadConfig({ MAILROOM_BREAKER_FAILURES: '0' }, '/srv')).toThrow(ConfigError);
    expect(() => loadConfig({ MAILROOM_BREAKER_HALF_OPEN_SECONDS: 'soon' }, '/srv')).toThrow(
      /MAILROOM_BREAKER_HALF_OPEN_SECONDS/,
    );
  });

  it("the process's breakers follow them: 2 failures open a service's breaker, a probe passes after 3 s", async () => {
    const t = await freshStore('sqlite');
    try {
      const clock = t.clock;
      const services = buildServices(testConfig({ MAILROOM_BREAKER_FAILURES: '2', MAILROOM_BREAKER_HALF_OPEN_SECONDS: '3' }), {
        store: t.store,
        clock,
      });
      try {
        const b = services.breakers;
        for (let i = 0; i < 2; i++) await b.failed('acme/smtp', await b.admit('acme/smtp'), '421 try later');
        expect((await b.view('acme/smtp')).state).toBe('open');
        expect((await b.admit('acme/smtp')).kind).toBe('refuse');
        clock.advance(3_000);
        expect((await b.admit('acme/smtp')).kind).toBe('probe');
      } finally {
        await services.close();
      }
    } finally {
      await t.cleanup();
    }
  });
});
