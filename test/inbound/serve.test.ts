import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { closerPerTest, tempDir } from '../support/cleanup.js';
import { freePort } from '../support/smtp-sink.js';
import { requireBuild, startCli } from '../support/processes.js';

// `mailroom serve` with MAILROOM_INBOUND_SMTP_PORT runs the listener for the bounce domains of
// the declarative file, and stops it on SIGTERM (run `npm run build` first).

const c = closerPerTest();

describe('mailroom serve with the inbound SMTP listener', () => {
  it('accepts RCPT for a configured bounce domain only, and shuts down cleanly', async () => {
    requireBuild();
    const dir = tempDir(c);
    const configFile = path.join(dir, 'mailroom.yaml');
    fs.writeFileSync(
      configFile,
      [
        'organizations:',
        '  - id: acme',
        '    services:',
        '      - id: relay',
        '        provider: smtp',
        '        default: true',
        '        smtp: { host: 127.0.0.1, port: 2525 }',
        '        bounce_domain: bounces.acme.test',
        '',
      ].join('\n'),
    );
    const [port, smtpPort] = [await freePort(), await freePort()];
    const app = startCli(
      ['serve'],
      {
        MAILROOM_PORT: String(port),
        MAILROOM_HOST: '127.0.0.1',
        MAILROOM_DATA_DIR: dir,
        MAILROOM_CONFIG: configFile,
        MAILROOM_INBOUND_SMTP_PORT: String(smtpPort),
        MAILROOM_INBOUND_SMTP_HOST: '127.0.0.1',
        MAILROOM_LOG_LEVEL: 'warn',
      },
      c,
    );
    await app.waitForOutput(`inbound SMTP (bounces, feedback reports) on 127.0.0.1:${smtpPort}`);
    const client = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
    const refused = await client
      .sendMail({ envelope: { from: '', to: ['someone@elsewhere.example'] }, raw: 'Subject: x\r\n\r\nx\r\n' })
      .catch((e: unknown) => e);
    expect(refused instanceof Error && 'responseCode' in refused ? refused.responseCode : undefined).toBe(550);
    // A well-formed VERP address of the bounce domain is accepted (its token is checked after DATA).
    const info = await client.sendMail({
      envelope: { from: '', to: [`bounce+${'a'.repeat(55)}@bounces.acme.test`] },
      raw: 'Subject: x\r\n\r\nx\r\n',
    });
    expect(info.response).toMatch(/^250/);
    expect(fs.existsSync(path.join(dir, 'verp-secret'))).toBe(true);
    app.child.kill('SIGTERM');
    expect(await app.exited).toBe(0);
  });
});
