import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyConfig } from '../src/admin/apply.js';
import { systemClock } from '../src/domain/clock.js';
import { openStore } from '../src/storage/store.js';
import {
  countRange,
  DAY_MS,
  firstIndexAt,
  refillRange,
  SCALE_ORGS,
  SEED_VERSION,
  seedAll,
  SPAN_MS,
  type SeedPlan,
} from './scale-seed.js';
import { measure, type Measured } from './scale-measure.js';
import { orgsConfig } from './scale-orgs.js';

/**
 * Goal 3 of issue 16, flat with size: `npm run bench:scale` seeds (once) a SQLite database with
 * BENCH_SCALE_MESSAGES messages (default 10 M) over 30 days and 300 organizations, kept in
 * BENCH_SCALE_DB (default /tmp/scale/mailroom-<N>.db) and reused while its side file says it is
 * whole, then measures the same things on an empty database and on it, and prints each figure
 * with its goal. The retention purge takes the oldest day; the next run puts it back.
 *
 * Seeding time on this 2-core machine while other work ran (load average 12–27): 1 M messages
 * 188 s (108 s of inserts, 80 s building 13 indexes, 2.2 GB); 10 M inserted in 2,245 s
 * (~4,500 a second), and the first index alone then took 309 s, so plan for an hour and ~20 GB.
 */

const MESSAGES = Number(process.env.BENCH_SCALE_MESSAGES ?? 10_000_000);
const DB_FILE = process.env.BENCH_SCALE_DB ?? `/tmp/scale/mailroom-${MESSAGES}.db`;

interface SideFile extends SeedPlan {
  seedSeconds: number;
  seededAt: string;
  /** SEED_VERSION of the rows (absent: 1, whose ids past ~3.5 M messages came from doubles). */
  version?: number;
}

async function createOrgs(file: string): Promise<void> {
  const store = await openStore(`sqlite:${file}`, { clock: systemClock });
  try {
    await applyConfig(store, orgsConfig());
  } finally {
    await store.close();
  }
}

/** The seeded database, made if missing; the oldest day put back if a purge took it. */
async function seeded(): Promise<SideFile> {
  const side = `${DB_FILE}.json`;
  const previous =
    fs.existsSync(DB_FILE) && fs.existsSync(side) ? (JSON.parse(fs.readFileSync(side, 'utf8')) as SideFile) : undefined;
  if (previous !== undefined && previous.version !== SEED_VERSION)
    console.log(`${DB_FILE} holds seed version ${previous.version ?? 1}, not ${SEED_VERSION}: seeding again`);
  if (previous !== undefined && previous.version === SEED_VERSION) {
    const plan = previous;
    // Opening migrates: a new index is built over every stored row (timed).
    const t = performance.now();
    await openStore(`sqlite:${DB_FILE}`, { clock: systemClock }).then((s) => s.close());
    console.log(
      `reusing ${DB_FILE} (${plan.messages.toLocaleString('en')} messages, seeded in ${plan.seedSeconds.toFixed(0)} ` +
        `s on ${plan.seededAt}); opened and migrated in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    const dayEnd = firstIndexAt(plan, plan.start + DAY_MS);
    const present = countRange(DB_FILE, plan, 0, dayEnd);
    if (present < dayEnd) {
      const t1 = performance.now();
      refillRange(DB_FILE, plan, 0, dayEnd);
      console.log(
        `  put back the oldest day (${(dayEnd - present).toLocaleString('en')} ` +
          `messages were purged) in ${((performance.now() - t1) / 1000).toFixed(1)} s`,
      );
    }
    return plan;
  }
  fs.mkdirSync(path.dirname(DB_FILE), { recursive: true });
  for (const f of [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`, side]) fs.rmSync(f, { force: true });
  // The seed ends a minute before now, so the bench's clock (which starts there) finds a full month.
  const plan: SeedPlan = { messages: MESSAGES, start: Date.now() - 60_000 - SPAN_MS };
  console.log(`seeding ${MESSAGES.toLocaleString('en')} messages over 30 days and ${SCALE_ORGS} organizations into ${DB_FILE}`);
  const t = performance.now();
  await createOrgs(DB_FILE);
  seedAll(DB_FILE, plan, (line) => console.log(line));
  const seedSeconds = (performance.now() - t) / 1000;
  const bytes = fs.statSync(DB_FILE).size;
  console.log(`seeding took ${seedSeconds.toFixed(0)} s; the file holds ${(bytes / 1e9).toFixed(2)} GB`);
  const out: SideFile = { ...plan, seedSeconds, seededAt: new Date().toISOString(), version: SEED_VERSION };
  fs.writeFileSync(side, JSON.stringify(out));
  return out;
}

function line(name: string, value: number, unit: string, goal: string, met: boolean): string {
  return (
    `  ${name.padEnd(44)} ${value.toFixed(unit === 'req/s' ? 0 : 1).padStart(8)} ${unit.padEnd(6)} ` +
    `goal ${goal.padEnd(22)} ${met ? 'met' : 'NOT MET'}`
  );
}

function report(label: string, m: Measured, empty: Measured | undefined): void {
  console.log(`${label}:`);
  const ratio = empty === undefined ? 1 : m.sendRps / empty.sendRps;
  console.log(
    line(
      'POST /v1/send throughput (50 conn.)',
      m.sendRps,
      'req/s',
      empty === undefined ? '(reference)' : `≥ 0.9× empty (${ratio.toFixed(2)}×)`,
      ratio >= 0.9,
    ),
  );
  console.log(line('GET /v1/history first page p99', m.historyFirstP99, 'ms', '< 20 ms', m.historyFirstP99 < 20));
  console.log(line('GET /v1/history filtered page p99', m.historyFilteredP99, 'ms', '< 20 ms', m.historyFilteredP99 < 20));
  console.log(line('GET /v1/messages/{id} p99', m.messageP99, 'ms', '< 5 ms', m.messageP99 < 5));
  if (m.purge !== undefined) {
    const p = m.purge;
    console.log(line(`API p99 during the purge (${p.rate}/s mixed)`, p.p99, 'ms', '< 20 ms', p.p99 < 20));
    console.log(
      `    the same load without a purge: p99 ${p.quietP99.toFixed(1)} ms; ` +
        `during it p99.9 ${p.p999.toFixed(1)} ms, max ${p.max.toFixed(1)} ms`,
    );
    console.log(
      `    p99 during it by kind: ${Object.entries(p.byKind)
        .map(([kind, v]) => `${kind} ${v.toFixed(1)} ms`)
        .join(', ')}`,
    );
    console.log(
      `    purged ${p.purged.toLocaleString('en')} of ${p.due.toLocaleString('en')} messages of the ` +
        `oldest day in ${p.seconds.toFixed(1)} s (${(p.purged / Math.max(p.seconds, 0.001)).toFixed(0)} msg/s)`,
    );
  }
  if (m.failures.length > 0) console.log(`    failures: ${m.failures.join('; ')}`);
}

async function main(): Promise<void> {
  const t0 = performance.now();
  console.log(`mailroom bench:scale — Node ${process.version}, ${os.cpus().length} cores, SQLite`);
  const plan = await seeded();
  const emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-scale-empty-'));
  const emptyFile = path.join(emptyDir, 'empty.db');
  try {
    await createOrgs(emptyFile);
    const empty = await measure({ file: emptyFile, plan: undefined, dataDir: emptyDir });
    report('empty database', empty, undefined);
    const full = await measure({ file: DB_FILE, plan, dataDir: emptyDir });
    report(`${plan.messages.toLocaleString('en')} messages`, full, empty);
  } finally {
    fs.rmSync(emptyDir, { recursive: true, force: true });
  }
  console.log(`bench:scale ran in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
