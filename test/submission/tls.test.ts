import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { modeBanner, modeSummary } from '../../src/config/mode.js';
import { closerPerTest, tempDir } from '../support/cleanup.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';
import { selfSigned, type TestCert } from '../support/processes.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { dialogue, plain, startSubmissionFor, stubPipeline } from '../support/submission.js';

const pair = (cert: TestCert) => ({ cert: fs.readFileSync(cert.certFile), key: fs.readFileSync(cert.keyFile) });
const production = (cert: TestCert, extra: Record<string, string> = {}) => ({
  MAILROOM_ENV: 'production',
  MAILROOM_TLS_CERT_FILE: cert.certFile,
  MAILROOM_TLS_KEY_FILE: cert.keyFile,
  ...extra,
});

/**
 * TLS of the submission listener (issue 28, L2): STARTTLS with our certificate, implicit TLS, AUTH only
 * after TLS in production.
 */
describeDialects('SMTP submission TLS on %s', (dialect, skip) => {
  const c = closerPerTest();
  const t = freshStoreEach(dialect, skip, (s) => seedOrg(s.store));

  it.skipIf(skip)('production: AUTH before STARTTLS is 538 5.7.11; after it, 235', async () => {
    const cert = selfSigned(tempDir(c), 'smtp');
    const s = await startSubmissionFor({ ...t, closer: c, pipeline: stubPipeline(), env: production(cert), tls: pair(cert) });
    const d = await dialogue(s.listener.port, c);
    expect(await d.command('EHLO client.test')).toContain('250-STARTTLS');
    expect(await d.command(`AUTH PLAIN ${plain('acme', PRIVATE_KEY)}`)).toEqual([
      '538 5.7.11 Must issue a STARTTLS command first',
    ]);
    expect(await d.command('MAIL FROM:<a@acme.test>')).toEqual([expect.stringMatching(/^530 5\.7\.0 /)]);
    expect((await d.startTls(cert.cert))[0]).toMatch(/^220 /);
    const ehlo = await d.command('EHLO client.test');
    expect(ehlo).toContain('250-AUTH PLAIN LOGIN');
    expect(ehlo.some((l) => l.includes('STARTTLS'))).toBe(false);
    expect(await d.command(`AUTH PLAIN ${plain('acme', PRIVATE_KEY)}`)).toEqual(['235 2.7.0 Authentication successful']);
    // The AUTH refused before TLS was never checked: it did not count toward the lockout.
    expect(s.signIns.retryAfterSeconds('127.0.0.1')).toBeUndefined();
  });

  it.skipIf(skip)('nodemailer: STARTTLS with the certificate as CA, AUTH PLAIN, 250 2.0.0 Ok: queued as …', async () => {
    const cert = selfSigned(tempDir(c), 'smtp');
    const pipeline = stubPipeline();
    const s = await startSubmissionFor({ ...t, closer: c, pipeline, env: production(cert), tls: pair(cert) });
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: s.listener.port,
      secure: false,
      requireTLS: true,
      tls: { ca: cert.cert, servername: 'localhost' },
      auth: { user: 'acme', pass: PRIVATE_KEY, method: 'PLAIN' },
    });
    c.defer(() => transport.close());
    const info = await transport.sendMail({ from: 'a@acme.test', to: 'b@example.org', subject: 'hi', text: 'Hello' });
    expect(info.response).toBe('250 2.0.0 Ok: queued as msg_stub1');
    expect(pipeline.accepted[0]?.toString()).toContain('Subject: hi');
  });

  it.skipIf(skip)('the implicit-TLS port: TLS from the first byte, AUTH LOGIN, and SIGHUP-style certificate swaps', async () => {
    const dir = tempDir(c);
    const first = selfSigned(dir, 'first');
    const second = selfSigned(dir, 'second');
    const s = await startSubmissionFor({
      ...t,
      closer: c,
      pipeline: stubPipeline(),
      env: production(first),
      tls: pair(first),
      tlsPort: true,
    });
    const port = s.listener.tlsPort;
    if (port === undefined) throw new Error('no TLS port');
    const d = await dialogue(port, c, { implicitTls: { ca: first.cert } });
    expect(d.greeting[0]).toMatch(/^220 /);
    expect(await d.command('EHLO client.test')).toContain('250-AUTH PLAIN LOGIN');
    await d.command('AUTH LOGIN');
    await d.command(Buffer.from('acme').toString('base64'));
    expect(await d.command(Buffer.from(PRIVATE_KEY).toString('base64'))).toEqual(['235 2.7.0 Authentication successful']);

    const fingerprint = (ca: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = tls.connect({ port, host: '127.0.0.1', ca, servername: 'localhost' }, () => {
          resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
          socket.destroy();
        });
        socket.on('error', reject);
      });
    expect(await fingerprint(first.cert)).toBe(new X509Certificate(first.cert).fingerprint256);
    s.listener.updateCertificate(pair(second));
    expect(await fingerprint(second.cert)).toBe(new X509Certificate(second.cert).fingerprint256);
  });

  it.skipIf(skip)('a failed handshake or a reset socket is logged, never the end of the process', async () => {
    const cert = selfSigned(tempDir(c), 'smtp');
    const s = await startSubmissionFor({
      ...t,
      closer: c,
      pipeline: stubPipeline(),
      env: production(cert),
      tls: pair(cert),
      tlsPort: true,
    });
    // Plain text to the implicit-TLS port: the handshake fails on the server side.
    await new Promise<void>((resolve) => {
      const socket = net.connect(s.listener.tlsPort ?? 0, '127.0.0.1', () => socket.write('EHLO not-tls\r\n'));
      socket.on('error', () => resolve());
      socket.on('close', () => resolve());
    });
    // A client that resets mid-DATA.
    const d = await dialogue(s.listener.port, c);
    await d.command('EHLO client.test');
    d.close();
    const again = await dialogue(s.listener.port, c);
    expect((await again.command('EHLO client.test'))[0]).toMatch(/^250-/);
    expect(s.warnings.length).toBeGreaterThan(0);
  });

  it.skipIf(skip)('production with MAILROOM_SUBMISSION_ALLOW_INSECURE=true and no certificate: AUTH in clear', async () => {
    const s = await startSubmissionFor({
      ...t,
      closer: c,
      pipeline: stubPipeline(),
      env: { MAILROOM_ENV: 'production', MAILROOM_SUBMISSION_ALLOW_INSECURE: 'true' },
    });
    const d = await dialogue(s.listener.port, c);
    expect((await d.command('EHLO client.test')).some((l) => l.includes('STARTTLS'))).toBe(false);
    expect(await d.command(`AUTH PLAIN ${plain('acme', PRIVATE_KEY)}`)).toEqual(['235 2.7.0 Authentication successful']);
  });
});

describe('submission settings', () => {
  const c = closerPerTest();
  const load = (env: Record<string, string>) => () => loadConfig({ MAILROOM_LOG_LEVEL: 'silent', ...env }, '/srv');

  it('are off without MAILROOM_SUBMISSION_PORT, with defaults when it is set', () => {
    expect(load({})().submission).toBeUndefined();
    expect(load({ MAILROOM_SUBMISSION_PORT: '587' })().submission).toEqual({
      port: 587,
      host: '0.0.0.0',
      tlsPort: undefined,
      tls: undefined,
      allowInsecure: false,
      maxClients: 20,
      idleMs: 60_000,
    });
    expect(Object.isFrozen(load({ MAILROOM_SUBMISSION_PORT: '587' })().submission)).toBe(true);
  });

  it('prefer the submission-only certificate, else the API one', () => {
    const both = load({
      MAILROOM_SUBMISSION_PORT: '587',
      MAILROOM_SUBMISSION_TLS_PORT: '465',
      MAILROOM_TLS_CERT_FILE: 'api.crt',
      MAILROOM_TLS_KEY_FILE: 'api.key',
      MAILROOM_SUBMISSION_TLS_CERT_FILE: 'smtp.crt',
      MAILROOM_SUBMISSION_TLS_KEY_FILE: 'smtp.key',
    })();
    expect(both.submission?.tls).toMatchObject({ certFile: '/srv/smtp.crt', certVariable: 'MAILROOM_SUBMISSION_TLS_CERT_FILE' });
    expect(both.tls?.certFile).toBe('/srv/api.crt');
    const shared = load({ MAILROOM_SUBMISSION_PORT: '587', MAILROOM_TLS_CERT_FILE: 'a.crt', MAILROOM_TLS_KEY_FILE: 'a.key' })();
    expect(shared.submission?.tls).toMatchObject({ keyFile: '/srv/a.key', keyVariable: 'MAILROOM_TLS_KEY_FILE' });
  });

  it('refuse a listener nobody could log in to safely, and half-done TLS, naming the variables', () => {
    expect(load({ MAILROOM_ENV: 'production', MAILROOM_SUBMISSION_PORT: '587' })).toThrow(ConfigError);
    expect(load({ MAILROOM_ENV: 'production', MAILROOM_SUBMISSION_PORT: '587' })).toThrow(
      /MAILROOM_SUBMISSION_PORT .*MAILROOM_TLS_CERT_FILE .*MAILROOM_SUBMISSION_ALLOW_INSECURE=true/,
    );
    expect(
      load({ MAILROOM_ENV: 'production', MAILROOM_SUBMISSION_PORT: '587', MAILROOM_SUBMISSION_ALLOW_INSECURE: 'true' }),
    ).not.toThrow();
    expect(load({ MAILROOM_SUBMISSION_PORT: '587', MAILROOM_SUBMISSION_TLS_PORT: '465' })).toThrow(
      /MAILROOM_SUBMISSION_TLS_PORT needs a certificate/,
    );
    expect(load({ MAILROOM_SUBMISSION_TLS_PORT: '465' })).toThrow(/MAILROOM_SUBMISSION_PORT is not/);
    expect(load({ MAILROOM_SUBMISSION_PORT: '587', MAILROOM_SUBMISSION_TLS_CERT_FILE: 'x.crt' })).toThrow(
      /MAILROOM_SUBMISSION_TLS_KEY_FILE is not set/,
    );
    expect(load({ MAILROOM_SUBMISSION_PORT: '587', MAILROOM_SUBMISSION_ALLOW_INSECURE: 'yes' })).toThrow(
      /MAILROOM_SUBMISSION_ALLOW_INSECURE must be one of true, false/,
    );
    expect(load({ MAILROOM_SUBMISSION_PORT: '587', MAILROOM_SUBMISSION_MAX_CLIENTS: '0' })).toThrow(
      /MAILROOM_SUBMISSION_MAX_CLIENTS/,
    );
    void c;
  });

  it('say in the start banner what they relax', () => {
    const dev = modeBanner(modeSummary(load({ MAILROOM_SUBMISSION_PORT: '587' })()));
    expect(dev).toContain('  - SMTP submission accepts AUTH (keys as passwords) before or without TLS');
    const prod = modeSummary(
      load({ MAILROOM_ENV: 'production', MAILROOM_SUBMISSION_PORT: '587', MAILROOM_SUBMISSION_ALLOW_INSECURE: 'true' })(),
    );
    expect(prod.relaxed).toEqual([
      'SMTP submission accepts AUTH (keys as passwords) before or without TLS (MAILROOM_SUBMISSION_ALLOW_INSECURE=true)',
    ]);
    expect(modeSummary(load({ MAILROOM_ENV: 'production' })()).relaxed).toEqual([]);
  });
});
