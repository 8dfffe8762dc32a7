import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/env.js';

describe('loadConfig', () => {
  it('has working defaults on an empty environment', () => {
    const c = loadConfig({}, '/srv/app');
    expect(c.port).toBe(8080);
    expect(c.host).toBe('0.0.0.0');
    expect(c.baseUrl).toBe('http://localhost:8080');
    expect(c.docsUrl).toBe('http://localhost:8080/docs');
    expect(c.dataDir).toBe('/srv/app/data');
    expect(c.databaseUrl).toBe(`sqlite:${path.join('/srv/app/data', 'mailroom.db')}`);
    expect(c.env).toBe('development');
    expect(c.redisUrl).toBeUndefined();
    expect(c.adminToken).toBeUndefined();
  });

  it('reads every variable', () => {
    const c = loadConfig(
      {
        MAILROOM_PORT: '9000',
        MAILROOM_HOST: '127.0.0.1',
        MAILROOM_BASE_URL: 'https://mail.example.com/',
        MAILROOM_DATABASE_URL: 'postgres://u@db/mail',
        MAILROOM_REDIS_URL: 'redis://127.0.0.1:6379',
        MAILROOM_ADMIN_TOKEN: 'a-very-long-admin-token-0123456789',
        MAILROOM_CONFIG: 'conf/mailroom.yaml',
        MAILROOM_ENV: 'production',
        MAILROOM_DATA_DIR: '/var/lib/mailroom',
      },
      '/srv/app',
    );
    expect(c).toMatchObject({
      port: 9000,
      host: '127.0.0.1',
      baseUrl: 'https://mail.example.com',
      docsUrl: 'https://mail.example.com/docs',
      databaseUrl: 'postgres://u@db/mail',
      redisUrl: 'redis://127.0.0.1:6379',
      adminToken: 'a-very-long-admin-token-0123456789',
      configFile: '/srv/app/conf/mailroom.yaml',
      env: 'production',
      dataDir: '/var/lib/mailroom',
    });
  });

  it('resolves relative SQLite paths against the working directory', () => {
    expect(loadConfig({ MAILROOM_DATABASE_URL: 'sqlite:db/x.db' }, '/srv').databaseUrl).toBe('sqlite:/srv/db/x.db');
  });

  it('stops on bad values and names every offending variable', () => {
    let error: unknown;
    try {
      loadConfig({
        MAILROOM_PORT: 'eighty',
        MAILROOM_ENV: 'staging',
        MAILROOM_DATABASE_URL: 'mysql://x',
        MAILROOM_BASE_URL: 'ftp://x',
        MAILROOM_ADMIN_TOKEN: 'short',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['MAILROOM_PORT', 'MAILROOM_ENV', 'MAILROOM_DATABASE_URL', 'MAILROOM_BASE_URL', 'MAILROOM_ADMIN_TOKEN']) {
      expect(message).toContain(name);
    }
  });

  it('reads the test-mode settings (issue 27): 7 days and 60 s by default, bounded', () => {
    const defaults = loadConfig({});
    expect([defaults.testRetentionDays, defaults.simulatorDelayMs]).toEqual([7, 60_000]);
    const set = loadConfig({ MAILROOM_TEST_RETENTION_DAYS: '2', MAILROOM_SIMULATOR_DELAY_SECONDS: '9' });
    expect([set.testRetentionDays, set.simulatorDelayMs]).toEqual([2, 9_000]);
    for (const [name, value] of [
      ['MAILROOM_TEST_RETENTION_DAYS', '0'],
      ['MAILROOM_SIMULATOR_DELAY_SECONDS', '3601'],
      ['MAILROOM_SIMULATOR_DELAY_SECONDS', 'soon'],
    ] as const) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(name);
    }
  });

  it('reads MAILROOM_REQUEST_LOG_DAYS (issue 29): 3 days by default, 0 switches the log off, bounded', () => {
    expect(loadConfig({}).requestLogDays).toBe(3);
    expect(loadConfig({ MAILROOM_REQUEST_LOG_DAYS: '0' }).requestLogDays).toBe(0);
    expect(loadConfig({ MAILROOM_REQUEST_LOG_DAYS: '14' }).requestLogDays).toBe(14);
    for (const value of ['-1', '3651', 'week', '1.5'])
      expect(() => loadConfig({ MAILROOM_REQUEST_LOG_DAYS: value }), value).toThrow('MAILROOM_REQUEST_LOG_DAYS');
  });

  it('is frozen', () => {
    const c = loadConfig({});
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.turnstile)).toBe(true);
  });
});
