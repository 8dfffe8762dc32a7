import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/env.js';

describe('inbound SMTP and VERP settings', () => {
  it('no listener unless MAILROOM_INBOUND_SMTP_PORT is set; the host defaults to every interface', () => {
    expect(loadConfig({}, '/tmp').inboundSmtp).toBeUndefined();
    expect(loadConfig({ MAILROOM_INBOUND_SMTP_PORT: '2525' }, '/tmp').inboundSmtp).toEqual({ port: 2525, host: '0.0.0.0' });
    expect(loadConfig({ MAILROOM_INBOUND_SMTP_PORT: '25', MAILROOM_INBOUND_SMTP_HOST: '127.0.0.1' }, '/tmp').inboundSmtp).toEqual(
      { port: 25, host: '127.0.0.1' },
    );
  });

  it('refuses a bad port and a VERP secret shorter than 32 characters, naming the variables', () => {
    expect(() => loadConfig({ MAILROOM_INBOUND_SMTP_PORT: 'smtp' }, '/tmp')).toThrow(/MAILROOM_INBOUND_SMTP_PORT/);
    expect(() => loadConfig({ MAILROOM_VERP_SECRET: 'short' }, '/tmp')).toThrow(ConfigError);
    expect(() => loadConfig({ MAILROOM_VERP_SECRET: 'short' }, '/tmp')).toThrow(/MAILROOM_VERP_SECRET/);
    expect(() => loadConfig({ MAILROOM_VERP_SECRET: 'x'.repeat(32) }, '/tmp')).not.toThrow();
  });
});
