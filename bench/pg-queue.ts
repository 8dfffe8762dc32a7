import os from 'node:os';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { systemClock } from '../src/domain/clock.js';
import type { ClaimedMessage } from '../src/storage/queue-types.js';
import { openStore, type Store } from '../src/storage/store.js';
import { median } from './rounds.js';
import { backendCpu, cpuBetween } from './pg-queue-cpu.js';
import { analyzeSchema, seedQueued, unsentCount } from './pg-queue-seed.js';

/**
 * Goal 4 of issue 16: mailroom's PostgreSQL queue against pg-boss, claim → mark sent → next
 * with a no-op transport, on the same database at the same concurrency.
 *
 * A shape is `loops x batch` (BENCH_PG_SHAPES, default 8x1,32x1,4x8): `loops` workers run side
 * by side in this process, each one claiming up to `batch` due jobs, doing nothing with them and
 * marking them done in one call, then claiming again, until all BENCH_PG_JOBS (20,000) pre-loaded
 * jobs are done. Jobs in flight: loops × batch; 8x1 and 32x1 are pg-boss's `work` with its
 * default batchSize 1 and localConcurrency 8 or 32, 4x8 is batching. BENCH_PG_ROUNDS (3) rounds.
 * - mailroom: the worker's own calls, as src/delivery/leases.ts and outcomes.ts make them:
 *   `queue.claim` in a transaction with synchronous_commit off (durable: false), then
 *   `queue.markSentMany` in a background transaction (the same). Each claim also reads the
 *   contents and writes a `sending` event per message; each mark-sent writes a `sent` event
 *   (the message's history, which pg-boss does not keep).
 * - pg-boss: `fetch(name, { batchSize })` then `complete(name, jobs)` with the fetched jobs
 *   (fenced to their attempt, as pg-boss's own `work` loop completes them), a no-op handler
 *   between. Its `work` API runs the same two statements, plus a polling delay between batches
 *   unless `burstWhenBatchFull`; driving fetch/complete directly measures the queue, not the timer.
 * Both use a pool of 10 connections (mailroom's default; pg-boss's `max` set to match). Each
 * run gets a fresh schema, pre-loaded outside the timed part; systems alternate round by round
 * so a busy moment of a shared machine lands on both.
 */

const PG_URL = process.env.BENCH_PG_URL ?? process.env.MAILROOM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const JOBS = Number(process.env.BENCH_PG_JOBS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_PG_ROUNDS ?? 3);
const SHAPES = (process.env.BENCH_PG_SHAPES ?? '8x1,32x1,4x8').split(',').map((s) => {
  const [loops, batch] = s.split('x').map(Number);
  if (loops === undefined || batch === undefined || !(loops > 0) || !(batch > 0))
    throw new Error(`BENCH_PG_SHAPES: "${s}" is not LOOPSxBATCH`);
  return { loops, batch };
});
const POOL = 10;
const LEASE_MS = 5 * 60_000;

interface RunFigures {
  /** Jobs per second, from the first claim to the last mark. */
  rate: number;
  /** CPU µs of this process per job. */
  cpuMicros: number;
  /** CPU µs of the database backends per job (NaN when the server is not local). */
  dbMicros: number;
}

function freshSchema(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * Runs `loops` workers until `total` jobs are done. `claim` returns a batch (empty when nothing
 * is claimable right now: near the end, rows locked by another worker's claim); `done` marks it.
 */
async function drive<T>(
  app: string,
  loops: number,
  total: number,
  claim: () => Promise<T[]>,
  done: (batch: T[]) => Promise<void>,
): Promise<RunFigures> {
  let finished = 0;
  const db = await backendCpu(PG_URL, app);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (finished < total) {
        const batch = await claim();
        if (batch.length === 0) {
          await new Promise((r) => setImmediate(r));
          continue;
        }
        await done(batch);
        finished += batch.length;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const dbMs = cpuBetween(db, await backendCpu(PG_URL, app));
  if (finished !== total) throw new Error(`done ${finished} of ${total}`);
  return {
    rate: total / seconds,
    cpuMicros: (used.user + used.system) / total,
    dbMicros: dbMs === undefined ? NaN : (dbMs * 1000) / total,
  };
}

/**
 * `worker`: each call in its own transaction, as leases.ts and outcomes.ts make them.
 * `statement`: each call alone, autocommitted with a durable commit, as pg-boss's calls run:
 * the queue's SQL against pg-boss's, without the transaction around it.
 */
type MailroomMode = 'worker' | 'statement';

async function mailroomRun(mode: MailroomMode, loops: number, batch: number, jobs: number): Promise<RunFigures> {
  const schema = freshSchema('bench_mr');
  const app = schema;
  let store: Store | undefined;
  try {
    store = await openStore(`${PG_URL}?schema=${schema}&application_name=${app}`, { clock: systemClock });
    await seedQueued(store, PG_URL, schema, jobs, Date.now() - 1000);
    const s = store;
    const sent = (claimed: ClaimedMessage[]) =>
      claimed.map((m) => ({ id: m.id, lease: m.lease_until, detail: { service: 'noop', response: '250 2.0.0 OK' } }));
    const figures =
      mode === 'worker'
        ? await drive<ClaimedMessage>(
            app,
            loops,
            jobs,
            () => s.transaction((tx) => tx.queue.claim(Date.now(), batch, LEASE_MS), { durable: false }),
            async (claimed) => {
              await s.transaction((tx) => tx.queue.markSentMany(sent(claimed), Date.now()), { background: true });
            },
          )
        : await drive<ClaimedMessage>(
            app,
            loops,
            jobs,
            () => s.queue.claim(Date.now(), batch, LEASE_MS),
            async (claimed) => {
              await s.queue.markSentMany(sent(claimed), Date.now());
            },
          );
    const left = await unsentCount(PG_URL, schema);
    if (left !== 0) throw new Error(`mailroom: ${left} messages not sent`);
    return figures;
  } finally {
    await store?.close();
    await dropSchema(schema);
  }
}

async function pgBossRun(loops: number, batch: number, jobs: number): Promise<RunFigures> {
  const schema = freshSchema('bench_pgb');
  const app = schema;
  const boss = new PgBoss({ connectionString: `${PG_URL}?application_name=${app}`, schema, max: POOL });
  boss.on('error', (err: unknown) => console.error('pg-boss:', err));
  try {
    await boss.start();
    const name = 'bench';
    await boss.createQueue(name);
    for (let i = 0; i < jobs; i += 5000) {
      await boss.insert(
        name,
        Array.from({ length: Math.min(5000, jobs - i) }, (_, k) => ({ data: { n: i + k } })),
      );
    }
    await analyzeSchema(PG_URL, schema);
    return await drive(
      app,
      loops,
      jobs,
      () => boss.fetch<{ n: number }>(name, { batchSize: batch }),
      async (fetched) => {
        // Its declared type is empty; the object carries `affected` (pg-boss's mapCommandResponse).
        const r = (await boss.complete(
          name,
          fetched.map((j) => ({ id: j.id, retryCount: j.retryCount })),
        )) as { affected?: number };
        if (r.affected !== fetched.length) throw new Error(`pg-boss completed ${String(r.affected)} of ${fetched.length}`);
      },
    );
  } finally {
    await boss.stop({ graceful: false }).catch(() => undefined);
    await dropSchema(schema);
  }
}

const fixed = (x: number) => (Number.isNaN(x) ? '?' : x.toFixed(0));

function spread(values: readonly number[]): string {
  return `${fixed(Math.min(...values))}–${fixed(Math.max(...values))}`;
}

function line(label: string, xs: readonly RunFigures[], ratios?: readonly number[]): string {
  const med = (f: (x: RunFigures) => number) => fixed(median(xs.map(f)));
  const ratio =
    ratios === undefined ? '' : `  ratio ${median(ratios).toFixed(2)}× (${ratios.map((x) => x.toFixed(2)).join(', ')})`;
  return (
    `  ${label.padEnd(34)} ${med((x) => x.rate).padStart(6)} jobs/s (${spread(xs.map((x) => x.rate))}), ` +
    `CPU/job ${med((x) => x.cpuMicros)} µs node + ${med((x) => x.dbMicros)} µs postgres${ratio}`
  );
}

async function main(): Promise<void> {
  const t0 = performance.now();
  console.log(
    `pg-queue bench: ${JOBS} jobs a run, ${ROUNDS} rounds, pool ${POOL} ` +
      `each; ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}; Node ${process.version}; pg-boss 12.38.0`,
  );
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  const version = (await client.query<{ server_version: string }>('show server_version')).rows[0]?.server_version;
  await client.end();
  console.log(`PostgreSQL ${version ?? '?'} at ${new URL(PG_URL).host}; ratios are mailroom/pg-boss per round, medians first`);
  // Warm all three (JIT, plan caches) on a small load.
  await mailroomRun('worker', 4, 4, 500);
  await mailroomRun('statement', 4, 4, 500);
  await pgBossRun(4, 4, 500);
  for (const { loops, batch } of SHAPES) {
    const worker: RunFigures[] = [];
    const statement: RunFigures[] = [];
    const boss: RunFigures[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // The order turns each round, so none always follows another's autovacuum.
      const runs = [
        async () => {
          worker.push(await mailroomRun('worker', loops, batch, JOBS));
        },
        async () => {
          statement.push(await mailroomRun('statement', loops, batch, JOBS));
        },
        async () => {
          boss.push(await pgBossRun(loops, batch, JOBS));
        },
      ];
      for (let k = 0; k < runs.length; k++) await runs[(k + r) % runs.length]?.();
    }
    const ratios = (xs: readonly RunFigures[]) => xs.map((x, i) => x.rate / (boss[i]?.rate ?? NaN));
    console.log(`${loops} loops × batch ${batch} (${loops * batch} in flight):`);
    console.log(line('mailroom, as the worker calls it', worker, ratios(worker)));
    console.log(line('mailroom, statements alone', statement, ratios(statement)));
    console.log(line('pg-boss fetch → complete', boss));
  }
  console.log(`took ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}

await main();
