import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import tls from 'node:tls';
import nodemailer from 'nodemailer';
import { beforeAll, expect, it } from 'vitest';
import { closerPerTest, tempDir } from '../support/cleanup.js';
import { messageRow } from '../support/db.js';
import { seedSmtpOrg, smtpService } from '../support/delivery.js';
import { describeDialects } from '../support/dialects.js';
import { requireBuild, selfSigned, startCli } from '../support/processes.js';
import { PRIVATE_KEY } from '../support/seed.js';
import { freePort, startSink, waitFor } from '../support/smtp-sink.js';
import { freshStore } from '../support/stores.js';

beforeAll(requireBuild);

/**
 * `mailroom serve` with MAILROOM_SUBMISSION_PORT (issue 28): it says where the listener is, a
 * 250 is durable (SIGKILL right after a burst of them: every acknowledged message is in the
 * database after a restart and gets delivered), and SIGTERM ends it cleanly.
 */
describeDialects('mailroom serve with SMTP submission on %s', (dialect, skip) => {
  const c = closerPerTest();

  it.skipIf(skip)(
    'every message answered 250 before a SIGKILL is stored and delivered after a restart',
    { timeout: 120_000 },
    async () => {
      const t = await freshStore(dialect);
      c.defer(() => t.cleanup());
      const sink = await startSink({}, c);
      await seedSmtpOrg(t.store, smtpService(sink.port));
      const dataDir = tempDir(c);
      const [httpPort, smtpPort] = [await freePort(), await freePort()];
      const env = (worker: 'on' | 'off') => ({
        MAILROOM_DATABASE_URL: t.database.url,
        MAILROOM_DATA_DIR: dataDir,
        MAILROOM_PORT: String(httpPort),
        MAILROOM_HOST: '127.0.0.1',
        MAILROOM_BASE_URL: `http://127.0.0.1:${httpPort}`,
        MAILROOM_SUBMISSION_PORT: String(smtpPort),
        MAILROOM_SUBMISSION_HOST: '127.0.0.1',
        MAILROOM_WORKER: worker,
        MAILROOM_WORKER_POLL_MS: '50',
        MAILROOM_LOG_LEVEL: 'error',
      });
      // Worker off first: what the kill leaves must be found queued, not already sent.
      const first = startCli(['serve'], env('off'), c);
      await first.waitForOutput(`SMTP submission on 127.0.0.1:${smtpPort} (no TLS)`);
      await first.waitForOutput('listening on');

      const acknowledged: string[] = [];
      let killed = false;
      const client = async (k: number) => {
        const transport = nodemailer.createTransport({
          host: '127.0.0.1',
          port: smtpPort,
          auth: { user: 'acme', pass: PRIVATE_KEY },
        });
        for (let i = k; i < 400 && !killed; i += 4) {
          try {
            const info = await transport.sendMail({
              from: 'app@acme.test',
              to: `r${i}@example.org`,
              subject: `n${i}`,
              text: 'x',
            });
            const id = /^250 2\.0\.0 Ok: queued as (msg_\S+)$/.exec(info.response)?.[1];
            if (id === undefined) throw new Error(`unexpected reply ${info.response}`);
            acknowledged.push(id);
          } catch (err) {
            if (!killed) throw err;
          }
          if (acknowledged.length >= 12 && !killed) {
            killed = true;
            first.child.kill('SIGKILL');
          }
        }
        transport.close();
      };
      await Promise.all([0, 1, 2, 3].map(client));
      await first.exited;
      expect(killed).toBe(true);

      for (const id of acknowledged) expect((await messageRow(t.store, id)).status).toBe('queued');
      const second = startCli(['serve'], env('on'), c);
      await second.waitForOutput('listening on');
      const allSent = async () => {
        for (const id of acknowledged) if ((await messageRow(t.store, id)).status !== 'sent') return false;
        return true;
      };
      await waitFor(allSent, 60_000, 'every acknowledged message sent');
      expect(sink.received.length).toBeGreaterThanOrEqual(acknowledged.length);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    },
  );

  it.skipIf(skip)(
    'submission-only certificate: STARTTLS and implicit TLS, plain HTTP, SIGHUP swaps it',
    { timeout: 60_000 },
    async () => {
      const t = await freshStore(dialect);
      c.defer(() => t.cleanup());
      const dir = tempDir(c);
      const first = selfSigned(dir, 'first');
      const second = selfSigned(dir, 'second');
      const [httpPort, smtpPort, tlsPort] = [await freePort(), await freePort(), await freePort()];
      const api = startCli(
        ['serve'],
        {
          MAILROOM_DATABASE_URL: t.database.url,
          MAILROOM_DATA_DIR: dir,
          MAILROOM_PORT: String(httpPort),
          MAILROOM_HOST: '127.0.0.1',
          MAILROOM_BASE_URL: `http://127.0.0.1:${httpPort}`,
          MAILROOM_SUBMISSION_PORT: String(smtpPort),
          MAILROOM_SUBMISSION_TLS_PORT: String(tlsPort),
          MAILROOM_SUBMISSION_HOST: '127.0.0.1',
          MAILROOM_SUBMISSION_TLS_CERT_FILE: first.certFile,
          MAILROOM_SUBMISSION_TLS_KEY_FILE: first.keyFile,
          MAILROOM_WORKER: 'off',
          MAILROOM_LOG_LEVEL: 'error',
        },
        c,
      );
      await api.waitForOutput(`SMTP submission on 127.0.0.1:${smtpPort} (STARTTLS), implicit TLS on 127.0.0.1:${tlsPort}`);
      await api.waitForOutput('listening on');
      expect((await fetch(`http://127.0.0.1:${httpPort}/v1/health`)).status).toBe(200);
      const fingerprint = () =>
        new Promise<string>((resolve, reject) => {
          const socket = tls.connect({ port: tlsPort, host: '127.0.0.1', rejectUnauthorized: false }, () => {
            resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
            socket.destroy();
          });
          socket.on('error', reject);
        });
      expect(await fingerprint()).toBe(new X509Certificate(first.cert).fingerprint256);
      fs.copyFileSync(second.certFile, first.certFile);
      fs.copyFileSync(second.keyFile, first.keyFile);
      api.child.kill('SIGHUP');
      const next = new X509Certificate(second.cert).fingerprint256;
      await waitFor(async () => (await fingerprint()) === next, 10_000, 'the new certificate after SIGHUP');
      api.child.kill('SIGTERM');
      expect(await api.exited).toBe(0);
    },
  );
});
