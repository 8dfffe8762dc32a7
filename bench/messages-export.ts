import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock } from '../src/domain/clock.js';
import { retentionCutoff } from '../src/domain/retention.js';
import type { HistoryFilter } from '../src/storage/history.js';
import { openStore } from '../src/storage/store.js';
import { startMailroom } from './child-servers.js';
import { EXPORT_ORG, seedExportPostgres, seedExportSqlite } from './messages-export-seed.js';
import { rssMb, sampleRss } from './proc-stats.js';

/**
 * The message list's CSV export at 1,000,000 messages (issue 29), through a real `mailroom
 * serve` (worker off): GET /admin/v1/organizations/acme/messages/export.csv read to the end
 * over HTTP. Prints rows/s, the time to the first byte and the server's RSS before and at its
 * peak during the export (sampled every 50 ms): a flat RSS is the proof that nothing buffers
 * the list. Then the search of the list (a contains test no B-tree serves) timed through the
 * store: the first page of a search that matches nothing walks every message in the range.
 * SQLite always; PostgreSQL too when BENCH_PG_URL names a database (a schema of its own, dropped
 * after). A measurement, not a test.
 *
 *   npm run bench:export      (BENCH_EXPORT_ROWS=100000 for a quicker run; BENCH_EXPORT_SEARCH=0 skips the
 *                             search timings, minutes at 1,000,000; BENCH_EXPORT_HEAP_MB=64 runs the server with
 *                             --max-old-space-size=64: the export still finishes, so it cannot hold the file)
 */

const ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_EXPORT_ROUNDS ?? 5);
const TOKEN = 'bench-export-admin-token-0123456789abcdef';
const SEARCH = process.env.BENCH_EXPORT_SEARCH !== '0';
const HEAP_MB = process.env.BENCH_EXPORT_HEAP_MB;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function exportOnce(url: string, pid: number, query = ''): Promise<void> {
  const before = rssMb(pid);
  const rss = sampleRss(pid, 50);
  const t0 = performance.now();
  const res = await fetch(`${url}/admin/v1/organizations/${EXPORT_ORG}/messages/export.csv${query}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  if (res.status !== 200 || res.body === null) throw new Error(`export answered ${res.status}: ${await res.text()}`);
  let firstByte = 0;
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body) {
    if (firstByte === 0) firstByte = performance.now() - t0;
    bytes += chunk.byteLength;
    for (const b of chunk) if (b === 10) lines++;
  }
  const seconds = (performance.now() - t0) / 1000;
  const peak = rss.stop();
  const rows = lines - 1;
  console.log(
    `  export${query === '' ? '' : ` ${query}`}: ${rows.toLocaleString('en')} rows, ${(bytes / 1e6).toFixed(1)} MB in ` +
      `${seconds.toFixed(1)} s = ${Math.round(rows / seconds).toLocaleString('en')} rows/s; first byte after ` +
      `${firstByte.toFixed(0)} ms; server RSS ${before.toFixed(0)} MB before, peak ${peak.toFixed(0)} MB during`,
  );
}

async function searches(databaseUrl: string): Promise<void> {
  const store = await openStore(databaseUrl, { clock: systemClock, migrate: false });
  try {
    const base: HistoryFilter = { mode: 'live', from: retentionCutoff(Date.now(), 30) };
    const cases: Array<[string, HistoryFilter]> = [
      ['no filter (index walk)', base],
      ['subject contains "customer 4999" (1 in 5,000)', { ...base, subjectContains: 'customer 4999' }],
      ['subject contains "ärger" (1 in 101)', { ...base, subjectContains: 'ärger' }],
      ['subject contains "zzz" (none: whole walk)', { ...base, subjectContains: 'zzz' }],
      ['recipient contains "user4999@" (1 in 5,000)', { ...base, recipientContains: 'user4999@' }],
      ['recipient contains "zzz" (none: whole walk)', { ...base, recipientContains: 'zzz' }],
      ['message id (exact)', { ...base, messageId: 'msg_nope' }],
    ];
    console.log(`  list page of 25 (store.messages.history), median of ${ROUNDS} (ms):`);
    for (const [name, filter] of cases) {
      await store.messages.history(EXPORT_ORG, filter, 26);
      const times: number[] = [];
      let n = 0;
      for (let i = 0; i < ROUNDS; i++) {
        const t0 = performance.now();
        n = (await store.messages.history(EXPORT_ORG, filter, 26)).length;
        times.push(performance.now() - t0);
      }
      console.log(`    ${name.padEnd(48)} ${median(times).toFixed(1).padStart(9)}  (${n} rows)`);
    }
  } finally {
    await store.close();
  }
}

async function measure(label: string, dataDir: string, databaseUrl: string, seconds: number): Promise<void> {
  console.log(`\n${label}: seeded ${ROWS.toLocaleString('en')} messages in ${seconds.toFixed(1)} s`);
  Object.assign(process.env, { MAILROOM_ADMIN_TOKEN: TOKEN, MAILROOM_DATABASE_URL: databaseUrl });
  const nodeArgs = HEAP_MB === undefined ? [] : [`--max-old-space-size=${HEAP_MB}`];
  if (HEAP_MB !== undefined) console.log(`  server heap capped: ${nodeArgs[0]}`);
  const server = await startMailroom({ dataDir, worker: 'off', logLevel: 'warn', nodeArgs });
  try {
    await exportOnce(server.url, server.pid);
    await exportOnce(server.url, server.pid, '?subject=customer%2042');
  } finally {
    await server.stop();
  }
  if (SEARCH) await searches(databaseUrl);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-bench-export-'));
try {
  const file = path.join(dir, 'mailroom.db');
  const seconds = await seedExportSqlite(file, ROWS);
  await measure('SQLite', dir, `sqlite:${file}`, seconds);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}

const pgUrl = process.env.BENCH_PG_URL;
if (pgUrl !== undefined) {
  const schema = `bench_export_${Date.now().toString(36)}`;
  const url = `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=${schema}`;
  const pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-bench-export-pg-'));
  const pg = await import('pg');
  const client = new pg.default.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    const seconds = await seedExportPostgres(url, schema, ROWS);
    await measure('PostgreSQL', pgDir, url, seconds);
  } finally {
    await client.query(`drop schema if exists ${schema} cascade`);
    await client.end();
    fs.rmSync(pgDir, { recursive: true, force: true });
  }
} else console.log('\nPostgreSQL: skipped (set BENCH_PG_URL=postgres://… to measure it too)');
