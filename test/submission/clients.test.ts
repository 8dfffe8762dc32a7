import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import nodemailer from 'nodemailer';
import { expect, it } from 'vitest';
import { SEND_PIPELINE } from '../../src/submission/wiring.js';
import { tempDir } from '../support/cleanup.js';
import { deliveryHarness, privateHeaders } from '../support/delivery.js';
import { describeDialects } from '../support/dialects.js';
import { selfSigned } from '../support/processes.js';
import { PRIVATE_KEY } from '../support/seed.js';
import { startSubmissionFor } from '../support/submission.js';

const run = promisify(execFile);
const hasSwaks = fs.existsSync('/usr/bin/swaks');
const QUEUED = /^250 2\.0\.0 Ok: queued as (msg_\S+)$/m;

const PYTHON = `
import smtplib, ssl, sys
port, ca, user, password = sys.argv[1:5]
context = ssl.create_default_context(cafile=ca)
with smtplib.SMTP_SSL('127.0.0.1', int(port), context=context) as s:
    s.ehlo('client.test')
    s.user, s.password = user, password
    s.auth('LOGIN', s.auth_login)
    s.mail('app@acme.test')
    s.rcpt('py@example.org')
    message = b'From: app@acme.test\\r\\nTo: py@example.org\\r\\nSubject: from smtplib\\r\\n\\r\\nHello from Python\\r\\n'
    code, reply = s.data(message)
    print(code, reply.decode())
`;

/**
 * Real SMTP clients against the real listener and send path (issue 28 acceptance): each message
 * is accepted with 250 2.0.0 Ok: queued as msg_…, delivered by the worker to a real SMTP sink
 * and listed in GET /v1/history. Production mode with a self-signed certificate throughout.
 */
describeDialects('SMTP submission with real clients on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  const setup = async (tlsPort = false) => {
    const { t, sink } = await h.smtpApp();
    const cert = selfSigned(tempDir(h.closer), 'smtp');
    const s = await startSubmissionFor({
      store: t.store,
      clock: t.clock,
      closer: h.closer,
      pipeline: SEND_PIPELINE,
      env: { MAILROOM_ENV: 'production', MAILROOM_TLS_CERT_FILE: cert.certFile, MAILROOM_TLS_KEY_FILE: cert.keyFile },
      tls: { cert: fs.readFileSync(cert.certFile), key: fs.readFileSync(cert.keyFile) },
      tlsPort,
    });
    const { worker } = h.worker(t);
    /** Delivers what is queued, then the id's history entry. */
    const deliveredInHistory = async (id: string) => {
      await worker.runOnce();
      const history = await t.app.inject({ method: 'GET', url: '/v1/history', headers: privateHeaders });
      const items = (history.json() as { items: Array<{ message_id: string; status: string }> }).items;
      return items.find((i) => i.message_id === id);
    };
    return { t, sink, cert, s, deliveredInHistory };
  };

  it.skipIf(skip)(
    'nodemailer (STARTTLS, AUTH PLAIN): Bcc stripped, every envelope recipient delivered',
    { timeout: 30_000 },
    async () => {
      const { sink, cert, s, deliveredInHistory } = await setup();
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port: s.listener.port,
        requireTLS: true,
        tls: { ca: cert.cert, servername: 'localhost' },
        auth: { user: 'acme', pass: PRIVATE_KEY, method: 'PLAIN' },
      });
      h.closer.defer(() => transport.close());
      const info = await transport.sendMail({
        from: 'app@acme.test',
        to: 'ada@example.org',
        bcc: 'hidden@example.org',
        subject: 'Grüße from nodemailer',
        text: '.a line that starts with a dot\nÄ non-ASCII line',
      });
      const id = QUEUED.exec(info.response)?.[1];
      expect(id, info.response).toBeDefined();
      expect(await deliveredInHistory(id ?? '')).toMatchObject({ status: 'sent' });
      expect(sink.received).toHaveLength(1);
      expect(sink.received[0]?.rcptTo.sort()).toEqual(['ada@example.org', 'hidden@example.org']);
      const raw = sink.received[0]?.raw.toString('utf8') ?? '';
      expect(raw).not.toMatch(/^bcc:/im);
      expect(raw).not.toContain('hidden@example.org');
      expect((await sink.parse(0)).text).toContain('.a line that starts with a dot');
    },
  );

  it.skipIf(skip)("Python's smtplib (implicit TLS, AUTH LOGIN)", { timeout: 30_000 }, async () => {
    const { sink, cert, s, deliveredInHistory } = await setup(true);
    const { stdout } = await run('python3', ['-c', PYTHON, String(s.listener.tlsPort), cert.certFile, 'acme', PRIVATE_KEY]);
    const id = /^250 2\.0\.0 Ok: queued as (msg_\S+)$/m.exec(stdout.trim())?.[1];
    expect(id, stdout).toBeDefined();
    expect(await deliveredInHistory(id ?? '')).toMatchObject({ status: 'sent' });
    expect(sink.received[0]?.rcptTo).toEqual(['py@example.org']);
    expect((await sink.parse(0)).subject).toBe('from smtplib');
  });

  it.skipIf(skip || !hasSwaks)('swaks (STARTTLS, AUTH PLAIN)', { timeout: 30_000 }, async () => {
    const { sink, s, deliveredInHistory } = await setup();
    const { stdout } = await run('swaks', [
      ...['--server', `127.0.0.1:${s.listener.port}`, '--ehlo', 'client.test', '--tls'],
      ...['--auth', 'PLAIN', '--auth-user', 'acme', '--auth-password', PRIVATE_KEY],
      ...['--from', 'app@acme.test', '--to', 'sw@example.org', '--header', 'Subject: from swaks', '--body', 'Hello'],
    ]);
    const id = /250 2\.0\.0 Ok: queued as (msg_\S+)/.exec(stdout)?.[1];
    expect(id, stdout).toBeDefined();
    expect(await deliveredInHistory(id ?? '')).toMatchObject({ status: 'sent' });
    expect((await sink.parse(0)).subject).toBe('from swaks');
  });
});
