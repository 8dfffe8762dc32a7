import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceTestError, type Transport } from '../../src/delivery/transport.js';
import { createSmtpTransport } from '../../src/delivery/transports/smtp.js';
import { smtpVerifyReason } from '../../src/delivery/transports/smtp-verify.js';
import type { Service } from '../../src/domain/types.js';
import { Closer, tempDir } from '../support/cleanup.js';
import { freePort, startSink } from '../support/smtp-sink.js';

function service(port: number, extra: { secure?: boolean; user?: string; pass?: string } = {}): Service {
  return {
    org_id: 'acme',
    id: 'relay',
    provider: 'smtp',
    is_default: true,
    max_per_second: null,
    version: 1,
    created_at: 0,
    updated_at: 0,
    settings: {
      smtp: {
        host: '127.0.0.1',
        port,
        secure: extra.secure ?? false,
        user: extra.user ?? '',
        pass: extra.pass ?? '',
        dkim: null,
      },
    },
  };
}

/** A TCP server that accepts and never says a word (no greeting): the test must end on its own deadline. */
async function silentServer(closer: Closer): Promise<number> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closer.defer(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return (server.address() as net.AddressInfo).port;
}

describe('SMTP service test (Transport.verify): connect, TLS, AUTH, QUIT without sending', () => {
  const closer = new Closer();
  afterEach(async () => {
    await closer.closeAll();
  });

  function open(s: Service, verifyTimeoutMs = 5_000): Transport {
    const transport = createSmtpTransport({ dnsRetryMs: 0, verifyTimeoutMs })(s, { dataDir: tempDir(closer) });
    closer.defer(() => transport.close());
    return transport;
  }

  async function reasonOf(transport: Transport): Promise<{ reason: string; message: string }> {
    const error = await transport.verify!().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ServiceTestError);
    const e = error as ServiceTestError;
    return { reason: e.reason, message: e.message };
  }

  it('passes with the right credentials, and sends no mail', async () => {
    const sink = await startSink({ auth: { user: 'mailer', pass: 's3cret' } }, closer);
    await open(service(sink.port, { user: 'mailer', pass: 's3cret' })).verify!();
    expect(sink.authAttempts).toEqual([{ user: 'mailer', ok: true }]);
    expect(sink.received).toHaveLength(0);
    expect(sink.rcptAttempts).toHaveLength(0);
  });

  it('passes against a relay that needs no authentication', async () => {
    const sink = await startSink({}, closer);
    await open(service(sink.port)).verify!();
    expect(sink.connections).toBe(1);
  });

  it("a wrong password is auth, with the relay's reply", async () => {
    const sink = await startSink({ auth: { user: 'mailer', pass: 's3cret' } }, closer);
    const { reason, message } = await reasonOf(open(service(sink.port, { user: 'mailer', pass: 'wrong' })));
    expect(reason).toBe('auth');
    expect(message).toContain('535');
    expect(sink.authAttempts).toEqual([{ user: 'mailer', ok: false }]);
  });

  it('TLS required (secure: true) against a relay without TLS is tls', async () => {
    const sink = await startSink({}, closer);
    const { reason, message } = await reasonOf(open(service(sink.port, { secure: true })));
    expect(reason).toBe('tls');
    expect(message).toContain('secure: true');
  });

  it('STARTTLS with a certificate that does not verify (self-signed, expired) is tls', async () => {
    const sink = await startSink({ starttls: true }, closer);
    expect((await reasonOf(open(service(sink.port)))).reason).toBe('tls');
  });

  it('nothing listening is connect', async () => {
    const port = await freePort();
    const { reason, message } = await reasonOf(open(service(port)));
    expect(reason).toBe('connect');
    expect(message).toContain('ECONNREFUSED');
  });

  it('a server that never answers is timeout, within the short deadline given', async () => {
    const port = await silentServer(closer);
    expect((await reasonOf(open(service(port), 300))).reason).toBe('timeout');
  });

  it("maps nodemailer's errors without a network", () => {
    expect(smtpVerifyReason({ code: 'EAUTH', responseCode: 535, message: 'Invalid login' })).toBe('auth');
    expect(smtpVerifyReason({ code: 'EENVELOPE', responseCode: 530, message: '5.7.0 Authentication required' })).toBe('auth');
    expect(smtpVerifyReason({ code: 'ETLS', message: 'Error initiating TLS' })).toBe('tls');
    expect(smtpVerifyReason({ code: 'ESOCKET', originalCode: 'CERT_HAS_EXPIRED', message: 'certificate has expired' })).toBe(
      'tls',
    );
    expect(smtpVerifyReason({ code: 'ETIMEDOUT', message: 'Greeting never received' })).toBe('timeout');
    expect(smtpVerifyReason({ code: 'EDNS', originalCode: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND relay.invalid' })).toBe(
      'connect',
    );
    expect(smtpVerifyReason({ code: 'ESOCKET', originalCode: 'ECONNREFUSED', message: 'connect ECONNREFUSED' })).toBe('connect');
    expect(smtpVerifyReason({ code: 'EPROTOCOL', responseCode: 421, message: '421 too busy' })).toBe('other');
  });
});
