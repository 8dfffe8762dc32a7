import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { lockMessagesTable } from '../support/db.js';
import { freshStore, PG_URL, postgresAvailable } from '../support/stores.js';
import { deliveryHarness } from './harness.js';
import { tempDir } from '../support/cleanup.js';
import { waitFor } from '../support/smtp-sink.js';

const pgUp = await postgresAvailable();
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/mailroom.js');
const BUILT_CLI = path.join(ROOT, 'dist/src/cli/main.js');

beforeAll(() => {
  if (!fs.existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: run \`npm run build\` first (npm test does)`);
});

/** Backends of other sessions waiting for a lock on this schema's messages table. */
async function waitersOn(schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const r = await client.query<{ n: string }>(
      'select count(*) as n from pg_locks where not granted and relation = to_regclass($1)',
      [`"${schema}".messages`],
    );
    return Number(r.rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

// PostgreSQL only: there a statement waits on a lock for as long as it is held, which is what
// makes a stop hang. SQLite gives up after its busy timeout.
describe('`mailroom worker` shutdown', () => {
  const h = deliveryHarness('postgres');

  it.skipIf(!pgUp)('a stop that hangs (the database never answers) ends at the hard deadline: exit 1, logged', { timeout: 60_000 }, async () => {
    const t = await freshStore('postgres');
    h.closer.defer(() => t.cleanup());
    const schema = new URL(t.database.url).searchParams.get('schema') ?? '';

    const child = spawn(process.execPath, [BIN, 'worker'], {
      env: { PATH: process.env.PATH ?? '', MAILROOM_DATABASE_URL: t.database.url, MAILROOM_DATA_DIR: tempDir(h.closer), MAILROOM_WORKER_POLL_MS: '50', MAILROOM_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.on('exit', (code, signal) => resolve({ code, signal }));
    });
    h.closer.defer(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    });
    await waitFor(() => output.includes('mailroom worker running'), 15_000, 'the worker to start');

    // Hold the queue table: the worker's next claim waits on the lock, and so does its stop
    // (the pool cannot close under a statement that never returns).
    const release = await lockMessagesTable(t.store);
    h.closer.defer(release);
    await waitFor(async () => (await waitersOn(schema)) > 0, 10_000, 'the worker to wait on the lock');

    const signalled = Date.now();
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      exited,
      new Promise<'hung'>((resolve) => { timer = setTimeout(() => resolve('hung'), 25_000); }),
    ]);
    clearTimeout(timer);
    expect(outcome, output).toEqual({ code: 1, signal: null });
    // The grace (10 s) plus 5 s, as `mailroom serve`.
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(14_000);
    expect(output).toContain('shutdown took too long; exiting');
  });
});
