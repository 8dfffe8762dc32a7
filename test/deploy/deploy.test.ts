import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { openStore } from '../../src/storage/store.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { closerPerTest, tempDir } from '../support/cleanup.js';
import { freePort } from '../support/smtp-sink.js';
import { requireBuild, ROOT, startCli, startProcess } from '../support/processes.js';
import { programInstalled } from '../support/programs.js';

const DEPLOY = path.join(ROOT, 'deploy');
/** Where Debian keeps local CA certificates (and where Caddy's trust installer would write). */
const SYSTEM_CAS = '/usr/local/share/ca-certificates';
const c = closerPerTest();
beforeAll(requireBuild);

/** Whether a program this file runs is on PATH (see test/support/programs.ts). */
const has = (program: string, installedByCi: boolean): boolean => programInstalled(program, installedByCi, 'its deployment test');

/** `[Section] Key=value` lines of a unit file, comments dropped. */
function unitKeys(file: string): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  let section = '';
  for (const raw of fs.readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header !== null) {
      section = header[1] ?? '';
      continue;
    }
    const eq = line.indexOf('=');
    const key = `${section}.${line.slice(0, eq)}`;
    keys.set(key, [...(keys.get(key) ?? []), line.slice(eq + 1)]);
  }
  return keys;
}

describe('systemd units in deploy/', () => {
  it('start `serve` and `worker --metrics-port <instance>` with the shared environment file, and stop with SIGTERM', () => {
    const serve = unitKeys(path.join(DEPLOY, 'mailroom.service'));
    expect(serve.get('Service.ExecStart')).toEqual([
      '/usr/bin/node --max-semi-space-size=4 --max-old-space-size=1024 /opt/mailroom/bin/mailroom.js serve',
    ]);
    const worker = unitKeys(path.join(DEPLOY, 'mailroom-worker@.service'));
    expect(worker.get('Service.ExecStart')).toEqual([
      '/usr/bin/node --max-semi-space-size=4 --max-old-space-size=1024 /opt/mailroom/bin/mailroom.js worker --metrics-port %i',
    ]);
    for (const unit of [serve, worker]) {
      expect(unit.get('Service.EnvironmentFile')).toEqual(['/etc/mailroom/mailroom.env']);
      expect(unit.get('Service.KillSignal')).toEqual(['SIGTERM']);
      // Longer than the processes' own deadline (10 s grace + 5 s), so systemd never SIGKILLs a clean stop.
      expect(Number(unit.get('Service.TimeoutStopSec')?.[0])).toBeGreaterThan(15);
      expect(unit.get('Install.WantedBy')).toEqual(['multi-user.target']);
    }
    // The example environment names only variables mailroom reads.
    const env = fs.readFileSync(path.join(DEPLOY, 'mailroom.env'), 'utf8');
    const names = [...env.matchAll(/^#?\s*(MAILROOM_[A-Z_]+)=/gm)].map((m) => m[1]);
    const source = fs.readFileSync(path.join(ROOT, 'src/config/env.ts'), 'utf8');
    expect(names.length).toBeGreaterThan(5);
    for (const name of names) expect(source, String(name)).toContain(`'${name}'`);
  });

  it('pass `systemd-analyze verify` without a warning', () => {
    if (!has('systemd-analyze', false)) return;
    const dir = tempDir(c);
    // A template unit is verified through an instance of it.
    fs.copyFileSync(path.join(DEPLOY, 'mailroom.service'), path.join(dir, 'mailroom.service'));
    fs.copyFileSync(path.join(DEPLOY, 'mailroom-worker@.service'), path.join(dir, 'mailroom-worker@9464.service'));
    const result = spawnSync(
      'systemd-analyze',
      ['verify', path.join(dir, 'mailroom.service'), path.join(dir, 'mailroom-worker@9464.service')],
      { encoding: 'utf8' },
    );
    expect(`${result.stdout}${result.stderr}`.trim()).toBe('');
    expect(result.status).toBe(0);
  });
});

function request(
  url: string,
  options: https.RequestOptions & { body?: string },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const mod = url.startsWith('https:') ? https : http;
    const req = mod.request(url, options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.once('error', reject);
    req.end(options.body);
  });
}

describe('deploy/Caddyfile in front of mailroom serve', () => {
  it('terminates TLS with its own certificate for the domain, redirects HTTP, and proxies the API', {
    timeout: 60_000,
  }, async () => {
    if (!has('caddy', true)) return;
    const dir = tempDir(c);
    const [apiPort, httpPort, httpsPort] = [await freePort(), await freePort(), await freePort()];
    const dbFile = path.join(dir, 'mailroom.db');
    const seeding = await openStore(`sqlite:${dbFile}`, { clock: systemClock });
    await seedOrg(seeding);
    await seeding.close();

    // mailroom as the README's deployment section sets it up behind a proxy.
    const api = startCli(
      ['serve'],
      {
        MAILROOM_DATA_DIR: dir,
        MAILROOM_PORT: String(apiPort),
        MAILROOM_HOST: '127.0.0.1',
        MAILROOM_LOG_LEVEL: 'warn',
        MAILROOM_BASE_URL: `https://localhost:${httpsPort}`,
        MAILROOM_TRUST_PROXY: '127.0.0.1',
        MAILROOM_WORKER: 'off',
      },
      c,
    );
    await api.waitForOutput('listening on');

    // The deploy file as shipped; only its placeholders are filled. Caddy gives `localhost` a
    // certificate from its own local CA (a public name would get an ACME one, unreachable here).
    const caddyHome = path.join(dir, 'caddy');
    const caddy = startProcess(
      'caddy',
      ['run', '--config', path.join(DEPLOY, 'Caddyfile'), '--adapter', 'caddyfile'],
      {
        HOME: caddyHome,
        XDG_DATA_HOME: path.join(caddyHome, 'data'),
        XDG_CONFIG_HOME: path.join(caddyHome, 'config'),
        MAILROOM_DOMAIN: 'localhost',
        MAILROOM_UPSTREAM: `127.0.0.1:${apiPort}`,
        CADDY_HTTP_PORT: String(httpPort),
        CADDY_HTTPS_PORT: String(httpsPort),
        CADDY_ADMIN: 'off',
      },
      c,
      'caddy',
    );
    c.defer(() => {
      caddy.child.kill('SIGTERM');
    });
    await caddy.waitForOutput('serving initial configuration');
    const rootCa = path.join(caddyHome, 'data/caddy/pki/authorities/local/root.crt');
    await caddy.waitForOutput('certificate obtained successfully');
    const ca = fs.readFileSync(rootCa, 'utf8');
    const tls = { ca, servername: 'localhost', headers: { host: 'localhost' } };

    const health = await request(`https://127.0.0.1:${httpsPort}/v1/health`, tls);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toMatchObject({ status: 'ok', database: 'ok' });
    // mailroom answered (its request id), not Caddy.
    expect(health.headers['x-request-id']).toMatch(/^req_/);

    const sent = await request(`https://127.0.0.1:${httpsPort}/v1/send`, {
      ...tls,
      method: 'POST',
      headers: { host: 'localhost', 'content-type': 'application/json', authorization: `Bearer ${PRIVATE_KEY}` },
      body: JSON.stringify({
        template_id: 'contact',
        template_params: { name: 'Ada', email: 'ada@example.org', message: 'via Caddy' },
      }),
    });
    expect(sent.status, sent.body).toBe(202);
    expect(JSON.parse(sent.body)).toMatchObject({ status: 'queued' });

    // The API's /metrics stays off the public side of the proxy.
    expect((await request(`https://127.0.0.1:${httpsPort}/metrics`, tls)).status).toBe(404);
    expect((await request(`http://127.0.0.1:${apiPort}/metrics`, {})).status).toBe(200);

    const plain = await request(`http://127.0.0.1:${httpPort}/v1/health`, { headers: { host: 'localhost' } });
    expect(plain.status).toBe(308);
    // (Caddy 2.6 names the port only when the request's Host did.)
    expect(plain.headers.location).toMatch(/^https:\/\/localhost(:\d+)?\/v1\/health$/);
    // Caddy's local CA stays out of the system trust store (skip_install_trust).
    const trusted = fs.existsSync(SYSTEM_CAS)
      ? fs.readdirSync(SYSTEM_CAS).map((f) => fs.readFileSync(path.join(SYSTEM_CAS, f), 'utf8').trim())
      : [];
    expect(trusted).not.toContain(ca.trim());
  });
});
