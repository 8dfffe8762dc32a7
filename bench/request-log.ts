import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { requestLogFilter } from '../src/admin/routes/request-log.js';
import { systemClock } from '../src/domain/clock.js';
import { retentionCutoff } from '../src/domain/retention.js';
import type { RequestLogFilter } from '../src/storage/request-log.js';
import { openStore, type Store } from '../src/storage/store.js';
import { seedRequestLog } from './request-log-seed.js';

/**
 * The request log's list query at 1,000,000 rows of one organization (issue 29), on SQLite and,
 * when BENCH_PG_URL names a database, PostgreSQL (a schema of its own, dropped after). Times the
 * admin API's query (store.requestLog.list with the route's filter), median of ROUNDS runs after
 * a warm-up. A measurement, not a test.
 *
 *   npm run build && node dist/bench/request-log.js    (BENCH_REQUEST_LOG_ROWS=100000 for a quicker run)
 */

const ROWS = Number(process.env.BENCH_REQUEST_LOG_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_REQUEST_LOG_ROUNDS ?? 15);
const ORG = 'acme';
const DAY = 86_400_000;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
};

async function measure(store: Store, label: string): Promise<void> {
  const now = Date.now();
  const oldest = retentionCutoff(now, 3);
  const first = await store.requestLog.list(ORG, requestLogFilter({ limit: 25 }, oldest), 26);
  const last = first[24];
  const cursor = last === undefined ? undefined : Buffer.from(JSON.stringify([last.created_at, last.id])).toString('base64url');
  const cases: Array<[string, RequestLogFilter]> = [
    ['first page', requestLogFilter({ limit: 25 }, oldest)],
    ['second page (cursor)', requestLogFilter({ limit: 25, ...(cursor === undefined ? {} : { cursor }) }, oldest)],
    ['status=422 (7%)', requestLogFilter({ limit: 25, status: 422 }, oldest)],
    ['status=451 (2%)', requestLogFilter({ limit: 25, status: 451 }, oldest)],
    ['code=insufficient_credits (1%)', requestLogFilter({ limit: 25, code: 'insufficient_credits' }, oldest)],
    ['key_id=key_bench_old (33%)', requestLogFilter({ limit: 25, key_id: 'key_bench_old' }, oldest)],
    [
      'since 1 day ago, status=451',
      requestLogFilter({ limit: 25, status: 451, since: new Date(now - DAY).toISOString() }, oldest),
    ],
    [
      'until 2 days ago (deep in the index)',
      requestLogFilter({ limit: 25, until: new Date(now - 2 * DAY).toISOString() }, oldest),
    ],
    ['code=captcha_failed (none: whole walk)', requestLogFilter({ limit: 25, code: 'captcha_failed' }, oldest)],
  ];
  console.log(`\n${label}: ${ROWS.toLocaleString('en')} rows, median of ${ROUNDS} (ms), rows returned`);
  for (const [name, filter] of cases) {
    await store.requestLog.list(ORG, filter, 26);
    const times: number[] = [];
    let n = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const t0 = performance.now();
      n = (await store.requestLog.list(ORG, filter, 26)).length;
      times.push(performance.now() - t0);
    }
    console.log(`  ${name.padEnd(42)} ${median(times).toFixed(2).padStart(9)}  (max ${Math.max(...times).toFixed(1)})  ${n}`);
  }
}

async function run(url: string, label: string, analyze?: () => Promise<void>): Promise<void> {
  const store = await openStore(url, { clock: systemClock });
  try {
    const seconds = await seedRequestLog(store, ORG, ROWS);
    console.log(`${label}: seeded ${ROWS.toLocaleString('en')} rows in ${seconds.toFixed(1)} s`);
    await measure(store, label);
    if (analyze !== undefined) {
      // Autovacuum analyzes a table this size within about a minute of the load: the plans it gets then.
      await analyze();
      await measure(store, `${label} after ANALYZE`);
    }
  } finally {
    await store.close();
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-bench-rlog-'));
try {
  const file = path.join(dir, 'mailroom.db');
  await run(`sqlite:${file}`, 'SQLite');
  // The same rows without the per-status and per-code indexes (migration 0020): what they buy.
  const raw = new Database(file);
  raw.exec('drop index request_log_org_status; drop index request_log_org_code');
  raw.close();
  const store = await openStore(`sqlite:${file}`, { clock: systemClock, migrate: false });
  await measure(store, 'SQLite without request_log_org_status and request_log_org_code').finally(() => store.close());
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
const pgUrl = process.env.BENCH_PG_URL;
if (pgUrl !== undefined) {
  const schema = `bench_rlog_${Date.now().toString(36)}`;
  const sep = pgUrl.includes('?') ? '&' : '?';
  const pg = await import('pg');
  const client = new pg.default.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    await run(`${pgUrl}${sep}schema=${schema}`, 'PostgreSQL', async () => {
      await client.query(`analyze ${schema}.request_log`);
    });
  } finally {
    await client.query(`drop schema if exists ${schema} cascade`);
    await client.end();
  }
}
