import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { systemClock } from '../../src/domain/clock.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { messageRows } from '../support/db.js';
import { freshDatabase, openTestStore } from '../support/stores.js';
import { closerPerTest, tempDir } from '../support/cleanup.js';
import { freePort } from '../support/smtp-sink.js';
import { requireBuild, ROOT, selfSigned, startCli } from '../support/processes.js';
import { describeDialects } from '../support/dialects.js';

const run = promisify(execFile);
const c = closerPerTest();
beforeAll(requireBuild);

const PARAMS = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello over TLS' };

/** The SHA-256 fingerprint of the certificate a fresh TLS connection to `port` is shown. */
function servedFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.once('error', reject);
  });
}

const fingerprintOf = (pem: string) => new X509Certificate(pem).fingerprint256;

function get(agent: https.Agent, port: number, ca: string): Promise<{ status: number; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', servername: 'localhost', port, path: '/v1/health', agent, ca }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
    });
    req.once('error', reject);
  });
}

describe('TLS configuration', () => {
  it('takes both files or neither, and names the one that is missing', () => {
    expect(loadConfig({}).tls).toBeUndefined();
    const both = loadConfig(
      { MAILROOM_TLS_CERT_FILE: 'tls/cert.pem', MAILROOM_TLS_KEY_FILE: '/etc/k.pem', MAILROOM_PORT: '8443' },
      '/srv',
    );
    expect(both.tls).toEqual({ certFile: '/srv/tls/cert.pem', keyFile: '/etc/k.pem' });
    // A server that speaks HTTPS advertises https:// links unless told otherwise.
    expect(both.baseUrl).toBe('https://localhost:8443');
    expect(() => loadConfig({ MAILROOM_TLS_CERT_FILE: 'c.pem' })).toThrow(/MAILROOM_TLS_KEY_FILE is not set/);
    expect(() => loadConfig({ MAILROOM_TLS_KEY_FILE: 'k.pem' })).toThrow(/MAILROOM_TLS_CERT_FILE is not set/);
    expect(() => loadConfig({ MAILROOM_TLS_KEY_FILE: 'k.pem' })).toThrow(ConfigError);
  });

  it('serve refuses to start on an unreadable or mismatched pair, naming the variable (exit 2)', async () => {
    const dir = tempDir(c);
    const a = selfSigned(dir, 'a');
    const b = selfSigned(dir, 'b');
    const err: string[] = [];
    const env = {
      MAILROOM_DATA_DIR: dir,
      MAILROOM_TLS_CERT_FILE: path.join(dir, 'missing.pem'),
      MAILROOM_TLS_KEY_FILE: a.keyFile,
    };
    expect(
      await main(
        ['serve'],
        env,
        () => undefined,
        (l) => err.push(l),
      ),
    ).toBe(2);
    expect(err.join('\n')).toMatch(/MAILROOM_TLS_CERT_FILE: cannot read .*missing\.pem: ENOENT/);
    err.length = 0;
    expect(
      await main(
        ['serve'],
        { ...env, MAILROOM_TLS_CERT_FILE: a.certFile, MAILROOM_TLS_KEY_FILE: b.keyFile },
        () => undefined,
        (l) => err.push(l),
      ),
    ).toBe(2);
    expect(err.join('\n')).toContain('are not a usable certificate and key');
    // Nothing was opened: the check runs before the store.
    expect(fs.existsSync(path.join(dir, 'mailroom.db'))).toBe(false);
  });
});

describe('mailroom serve over HTTPS', () => {
  it('SIGHUP serves the new certificate to new connections, keeps open ones, and keeps the old one when the new files are bad', {
    timeout: 60_000,
  }, async () => {
    const dir = tempDir(c);
    const live = { certFile: path.join(dir, 'live.crt'), keyFile: path.join(dir, 'live.key') };
    const first = selfSigned(dir, 'first');
    const second = selfSigned(dir, 'second');
    fs.copyFileSync(first.certFile, live.certFile);
    fs.copyFileSync(first.keyFile, live.keyFile);
    const port = await freePort();
    const server = startCli(
      ['serve'],
      {
        MAILROOM_DATA_DIR: dir,
        MAILROOM_PORT: String(port),
        MAILROOM_HOST: '127.0.0.1',
        MAILROOM_LOG_LEVEL: 'info',
        MAILROOM_TLS_CERT_FILE: live.certFile,
        MAILROOM_TLS_KEY_FILE: live.keyFile,
      },
      c,
    );
    await server.waitForOutput(`listening on https://localhost:${port}`);
    const bothCas = `${first.cert}\n${second.cert}`;
    expect(await servedFingerprint(port, bothCas)).toBe(fingerprintOf(first.cert));

    // A keep-alive connection opened before the reload.
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    c.defer(() => agent.destroy());
    expect(await get(agent, port, bothCas)).toEqual({ status: 200, reused: false });

    fs.copyFileSync(second.certFile, live.certFile);
    fs.copyFileSync(second.keyFile, live.keyFile);
    server.child.kill('SIGHUP');
    await server.waitForOutput('TLS certificate reloaded');
    expect(await servedFingerprint(port, bothCas)).toBe(fingerprintOf(second.cert));
    // The connection from before is still open and still answers.
    expect(await get(agent, port, bothCas)).toEqual({ status: 200, reused: true });

    // A renewal caught half-way: a certificate that does not match the key on disk.
    fs.copyFileSync(first.certFile, live.certFile);
    server.child.kill('SIGHUP');
    await server.waitForOutput('TLS certificate reload failed');
    expect(server.child.exitCode).toBeNull();
    expect(await servedFingerprint(port, bothCas)).toBe(fingerprintOf(second.cert));

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  describeDialects('the unmodified @emailjs/nodejs SDK on %s', (dialect, skip) => {
    // The SDK always connects to port 443 of its origin (node_modules/@emailjs/nodejs/mjs/api/sendPost.js),
    // so this server listens there: CI runs as root. It trusts our certificate the way an operator's
    // client would: NODE_EXTRA_CA_CERTS.
    it.skipIf(skip)(
      'init({ origin: "localhost" }) sends over TLS with a self-signed certificate',
      { timeout: 60_000 },
      async () => {
        const dir = tempDir(c);
        const cert = selfSigned(dir, 'sdk');
        const database = await freshDatabase(dialect);
        c.defer(() => database.drop());
        const seeding = await openTestStore(database.url, systemClock);
        await seedOrg(seeding);
        await seeding.close();

        const server = startCli(
          ['serve'],
          {
            MAILROOM_DATA_DIR: dir,
            MAILROOM_DATABASE_URL: database.url,
            MAILROOM_PORT: '443',
            MAILROOM_HOST: 'localhost',
            MAILROOM_LOG_LEVEL: 'warn',
            MAILROOM_WORKER: 'off',
            MAILROOM_TLS_CERT_FILE: cert.certFile,
            MAILROOM_TLS_KEY_FILE: cert.keyFile,
          },
          c,
        );
        await server.waitForOutput('listening on https://localhost:443');

        const script = `
        import emailjs from '@emailjs/nodejs';
        emailjs.init({ origin: 'localhost', publicKey: process.env.PK });
        const keys = process.env.SK ? { publicKey: process.env.PK, privateKey: process.env.SK } : undefined;
        try {
          const r = await emailjs.send('default_service', 'contact', JSON.parse(process.env.PARAMS), keys);
          console.log(JSON.stringify({ status: r.status, text: r.text }));
        } catch (e) {
          console.log(JSON.stringify({ status: e.status ?? null, text: e.text ?? e.code ?? String(e) }));
        }`;
        const sdk = async (env: Record<string, string>) => {
          const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
            cwd: ROOT,
            env: { PATH: process.env.PATH ?? '', PK: PUBLIC_KEY, PARAMS: JSON.stringify(PARAMS), ...env },
          });
          return JSON.parse(stdout.trim()) as { status: number | null; text: string };
        };

        expect(await sdk({ NODE_EXTRA_CA_CERTS: cert.certFile, SK: PRIVATE_KEY })).toEqual({ status: 200, text: 'OK' });
        expect(await sdk({ NODE_EXTRA_CA_CERTS: cert.certFile })).toEqual({ status: 200, text: 'OK' });
        // Real certificate checking: without the test CA the same call fails the handshake.
        expect(await sdk({ SK: PRIVATE_KEY })).toEqual({ status: null, text: 'DEPTH_ZERO_SELF_SIGNED_CERT' });

        const store = await openTestStore(database.url, systemClock);
        const rows = (await messageRows(store, 'acme'))
          .map((r) => ({ key_type: r.key_type, template_id: r.template_id }))
          .sort((a, b) => a.key_type.localeCompare(b.key_type));
        await store.close();
        expect(rows).toEqual([
          { key_type: 'private', template_id: 'contact' },
          { key_type: 'public', template_id: 'contact' },
        ]);
        server.child.kill('SIGTERM');
        expect(await server.exited).toBe(0);
      },
    );
  });
});
