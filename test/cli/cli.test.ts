import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { systemClock } from '../../src/domain/clock.js';
import { MIGRATIONS } from '../../src/storage/migrations/index.js';
import { openStore } from '../../src/storage/store.js';
import { EXAMPLE_CONFIG, EXAMPLE_ENV } from '../support/example-config.js';
import { waitFor } from '../support/smtp-sink.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/mailroom.js');

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-cli-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function run(argv: string[], env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    argv,
    env,
    (l) => out.push(l),
    (l) => err.push(l),
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function spawnCli(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  return { child, done, stdout: () => stdout, stderr: () => stderr };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

describe('mailroom CLI', () => {
  it('apply, keys and credits work on a fresh database', async () => {
    const dir = tempDir();
    const env = { MAILROOM_DATA_DIR: dir, ...EXAMPLE_ENV };
    const applied = await run(['apply', EXAMPLE_CONFIG], env);
    expect(applied.code).toBe(0);
    expect(applied.out).toContain('organization acme: created');
    const again = await run(['apply', EXAMPLE_CONFIG], env);
    expect(again.out).toBe('No changes.');

    const created = await run(['keys', 'create', 'acme', 'private'], env);
    expect(created.code).toBe(0);
    const [keyId, value] = created.out.split(/\s+/);
    expect(value).toMatch(/^sk_/);
    const listed = await run(['keys', 'list', 'acme'], env);
    expect(listed.out).toContain(keyId);
    expect(listed.out).not.toContain(value);

    const rotated = await run(['keys', 'rotate', 'acme', keyId ?? ''], env);
    expect(rotated.code).toBe(0);
    const revoked = await run(['keys', 'revoke', 'acme', rotated.out.split(/\s+/)[0] ?? ''], env);
    expect(revoked.code).toBe(0);

    const credits = await run(['credits', 'add', 'acme', '25'], env);
    expect(credits.out).toContain('1025 credits');

    const store = await openStore(`sqlite:${path.join(dir, 'mailroom.db')}`, { clock: systemClock });
    const statuses = (await store.keys.list('acme')).map((k) => k.status);
    await store.close();
    expect(statuses).toEqual(expect.arrayContaining(['active', 'rotated', 'revoked']));
  });

  it('reports config and usage errors with a non-zero exit', async () => {
    const dir = tempDir();
    const badYaml = path.join(dir, 'bad.yaml');
    fs.writeFileSync(badYaml, 'organizations:\n  - id: x\n    plan: gold\n');
    const bad = await run(['apply', badYaml], { MAILROOM_DATA_DIR: dir });
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(badYaml);
    expect(bad.err).toContain('organizations/0/plan');
    expect((await run(['apply', badYaml], { MAILROOM_DATA_DIR: dir, MAILROOM_PORT: 'x' })).err).toContain('MAILROOM_PORT');
    expect((await run(['frobnicate'], { MAILROOM_DATA_DIR: dir })).code).toBe(1);
    expect((await run(['credits', 'add', 'nobody', '5'], { MAILROOM_DATA_DIR: dir })).code).toBe(2);
  });

  it('three processes migrating one SQLite file at once apply it once', async () => {
    const dir = tempDir();
    const env = { MAILROOM_DATA_DIR: dir };
    const runs = [1, 2, 3].map(() => spawnCli(['migrate'], env));
    const codes = await Promise.all(runs.map((r) => r.done));
    expect(codes).toEqual([0, 0, 0]);
    const outputs = runs.map((r) => r.stdout().trim()).sort();
    expect(outputs).toEqual([
      `Applied: ${Object.keys(MIGRATIONS).sort().join(', ')}`,
      'Database is up to date.',
      'Database is up to date.',
    ]);
  });

  it('serve on a fresh machine creates the demo, prints keys and a curl command, and stops on SIGTERM', async () => {
    const dir = tempDir();
    const port = await freePort();
    const server = spawnCli(['serve'], {
      MAILROOM_DATA_DIR: dir,
      MAILROOM_PORT: String(port),
      MAILROOM_HOST: '127.0.0.1',
      MAILROOM_LOG_LEVEL: 'warn',
    });
    try {
      await waitFor(() => server.stdout().includes('curl'), 10_000, 'the curl command');
      const output = server.stdout();
      expect(output).toMatch(/public key: +pk_/);
      expect(output).toMatch(/private key: +sk_/);
      expect(output).toContain(`curl -s http://localhost:${port}/v1/send`);
      expect(fs.existsSync(path.join(dir, 'mailroom.db'))).toBe(true);
      expect(fs.readFileSync(path.join(dir, 'demo-keys.sqlite.txt'), 'utf8')).toMatch(/sk_/);
      const health = await fetch(`http://127.0.0.1:${port}/v1/health`);
      expect(health.status).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.done).toBe(0);
  });
});
