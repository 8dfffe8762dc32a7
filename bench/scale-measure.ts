import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { buildApp } from '../src/app.js';
import { buildServices } from '../src/cli/runtime.js';
import { loadConfig } from '../src/config/env.js';
import type { Clock } from '../src/domain/clock.js';
import { housekeeping } from '../src/delivery/housekeeping.js';
import { MemoryLimiterStore, type Counter } from '../src/protection/store.js';
import { openStore } from '../src/storage/store.js';
import { percentile } from './open-loop.js';
import type { LoadRequest, LoadResult, LoadSpec } from './scale-load.js';
import { privateKeyOf } from './scale-orgs.js';
import {
  countRange,
  DAY_MS,
  firstIndexAt,
  messageIdOf,
  SCALE_ORGS,
  SCALE_TEMPLATES,
  SPAN_MS,
  type SeedPlan,
} from './scale-seed.js';

const SECONDS = Number(process.env.BENCH_SCALE_SECONDS ?? 10);
const PURGE_SECONDS = Number(process.env.BENCH_SCALE_PURGE_SECONDS ?? 45);
const CONNECTIONS = 50;
/** Each open-loop run first runs this long over the same connections, not counted (LoadSpec.warmSeconds). */
const WARM_SECONDS = 3;
/** Open-loop rates: reads alone, and the mix under the purge (a third sends). */
const READ_RATE = Number(process.env.BENCH_SCALE_READ_RATE ?? 150);
const MIX_RATE = Number(process.env.BENCH_SCALE_MIX_RATE ?? 150);
const LOAD_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'scale-load.js');

class CountingOnly extends MemoryLimiterStore {
  override consume(counters: readonly Counter[]): Promise<number> {
    return super.consume(counters.map((c) => ({ ...c, limit: null })));
  }
}

export interface PurgeFigures {
  rate: number;
  p99: number;
  p999: number;
  max: number;
  quietP99: number;
  /** p99 during the purge of each kind of request (sends wait for the flush; reads do not). */
  byKind: Record<string, number>;
  due: number;
  purged: number;
  seconds: number;
}

export interface Measured {
  sendRps: number;
  historyFirstP99: number;
  historyFilteredP99: number;
  /** p99 of each filtered page's variant. */
  filtered: Record<string, number>;
  messageP99: number;
  purge?: PurgeFigures;
  failures: string[];
}

async function load(spec: LoadSpec): Promise<LoadResult> {
  const file = path.join(os.tmpdir(), `mailroom-scale-load-${process.pid}.json`);
  fs.writeFileSync(file, JSON.stringify(spec));
  try {
    const out = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [LOAD_SCRIPT, file], { maxBuffer: 256 * 1024 * 1024 }, (err, stdout) =>
        err === null ? resolve(stdout) : reject(err),
      );
    });
    return JSON.parse(out) as LoadResult;
  } finally {
    fs.rmSync(file, { force: true });
  }
}

const auth = (org: number) => ({ authorization: `Bearer ${privateKeyOf(org)}` });

function sendRequests(): LoadRequest[] {
  // Every organization with every template: the first send of each compiles its parameter schema.
  return Array.from({ length: SCALE_ORGS * SCALE_TEMPLATES.length }, (_, i) => ({
    kind: 'send',
    method: 'POST' as const,
    path: '/v1/send',
    headers: { 'content-type': 'application/json', ...auth(i % SCALE_ORGS) },
    body: JSON.stringify({
      template_id: SCALE_TEMPLATES[Math.floor(i / SCALE_ORGS) % SCALE_TEMPLATES.length],
      template_params: {
        name: 'Ada Lovelace',
        email: `user${i}@example.com`,
        company: 'Analytical Engines',
        plan: 'pro',
        message: 'The engine is ready. '.repeat(8),
      },
    }),
  }));
}

/** Messages to read back, each with its organization: from the plan, or any stored ones. */
function sampleMessages(file: string, plan: SeedPlan | undefined): Array<{ id: string; org: number }> {
  if (plan !== undefined) {
    // Not the oldest two days: the purge takes the first, and must not turn reads into 404s.
    const lo = firstIndexAt(plan, plan.start + 2 * DAY_MS);
    return Array.from({ length: 3000 }, () => {
      const m = messageIdOf(plan, lo + Math.floor(Math.random() * (plan.messages - lo)));
      return { id: m.id, org: Number(m.org.slice(3)) };
    });
  }
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare('select id, org_id from messages order by random() limit 3000').all() as Array<{
      id: string;
      org_id: string;
    }>;
    return rows.map((r) => ({ id: r.id, org: Number(r.org_id.slice(3)) }));
  } finally {
    db.close();
  }
}

/** History pages: the first page, and filtered pages (status + template + dates, and others). */
function readRequests(now: number, messages: ReadonlyArray<{ id: string; org: number }>): LoadRequest[] {
  const day = (k: number) => new Date(now - k * DAY_MS).toISOString();
  const variants: Array<[string, (t: string) => string]> = [
    ['status+template+range', (t) => `status=bounced&template_id=${t}&from=${day(20)}&to=${day(10)}`],
    ['2 statuses+template+range', (t) => `status=delivered,sent&template_id=${t}&from=${day(25)}&to=${day(3)}`],
    ['rare status', () => 'status=failed'],
    ['template+one day', (t) => `template_id=${t}&from=${day(6)}&to=${day(5)}`],
    ['status+one day', () => `status=complained&from=${day(8)}&to=${day(7)}`],
  ];
  const out: LoadRequest[] = [];
  for (let i = 0; i < 3000; i += 1) {
    const org = (i * 7) % SCALE_ORGS;
    const t = SCALE_TEMPLATES[i % SCALE_TEMPLATES.length] ?? 'welcome';
    const v = variants[i % variants.length];
    const m = messages[i % Math.max(messages.length, 1)];
    out.push({ kind: 'history first', method: 'GET', path: '/v1/history?limit=25', headers: auth(org) });
    if (v !== undefined)
      out.push({ kind: `filtered: ${v[0]}`, method: 'GET', path: `/v1/history?limit=25&${v[1](t)}`, headers: auth(org) });
    if (m !== undefined) out.push({ kind: 'message', method: 'GET', path: `/v1/messages/${m.id}`, headers: auth(m.org) });
  }
  return out;
}

function failuresOf(label: string, r: LoadResult): string[] {
  return Object.entries(r.kinds)
    .filter(([, k]) => k.non2xx + k.errors > 0)
    .map(([kind, k]) => `${label} ${kind}: ${k.non2xx} non-2xx, ${k.errors} errors`);
}

/** Sends, history pages and message reads against one database; the purge too when seeded. */
export async function measure(o: { file: string; plan: SeedPlan | undefined; dataDir: string }): Promise<Measured> {
  const config = loadConfig({
    MAILROOM_DATA_DIR: o.dataDir,
    MAILROOM_DATABASE_URL: `sqlite:${o.file}`,
    MAILROOM_LOG_LEVEL: 'warn',
  });
  // The seeded month ends a minute before the clock starts, wherever the wall clock is now.
  const base = o.plan === undefined ? Date.now() : o.plan.start + SPAN_MS + 60_000;
  const offset = base - Date.now();
  const clock: Clock = { now: () => Date.now() + offset };
  const store = await openStore(config.databaseUrl, { clock });
  const services = buildServices(config, { store, clock, protection: { store: new CountingOnly(clock) } });
  const { metrics, protection, blobs } = services;
  const app = await buildApp({ config, store, clock, metrics, protection, blobs });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const failures: string[] = [];
  try {
    const sends = sendRequests();
    // Warm-up long enough for the 1,200 template compilations (tens of ms each on a busy machine).
    await load({ url, mode: 'closed', seconds: 5, connections: CONNECTIONS, requests: sends });
    const thr = await load({ url, mode: 'closed', seconds: SECONDS, connections: CONNECTIONS, requests: sends });
    failures.push(...failuresOf('send', thr));

    const reads = readRequests(clock.now(), sampleMessages(o.file, o.plan));
    const r = await load({
      url,
      mode: 'open',
      rate: READ_RATE,
      seconds: SECONDS,
      warmSeconds: WARM_SECONDS,
      connections: 64,
      requests: reads,
    });
    failures.push(...failuresOf('read', r));
    const filtered: Record<string, number> = {};
    for (const [kind, k] of Object.entries(r.kinds)) if (kind.startsWith('filtered: ')) filtered[kind.slice(10)] = k.p99;
    const measured: Measured = {
      sendRps: thr.rps,
      historyFirstP99: r.kinds['history first']?.p99 ?? NaN,
      historyFilteredP99: Math.max(...Object.values(filtered)),
      filtered,
      messageP99: r.kinds.message?.p99 ?? NaN,
      failures,
    };
    for (const [v, p99] of Object.entries(filtered)) console.log(`    filtered page "${v}": p99 ${p99.toFixed(1)} ms`);
    if (o.plan !== undefined)
      measured.purge = await purgeUnderLoad(o.file, o.plan, url, reads, sends, { store, blobs: blobs.blobs, clock }, failures);
    return measured;
  } finally {
    await app.close();
    await services.close();
    await store.close();
  }
}

/**
 * The oldest day falls out of a 29-day retention while the API serves an open-loop mix (a
 * third sends, two thirds reads); the p99 counts requests due while the purge ran.
 */
async function purgeUnderLoad(
  file: string,
  plan: SeedPlan,
  url: string,
  reads: LoadRequest[],
  sends: LoadRequest[],
  deps: { store: Parameters<typeof housekeeping>[0]['store']; blobs: Parameters<typeof housekeeping>[0]['blobs']; clock: Clock },
  failures: string[],
): Promise<PurgeFigures> {
  const rate = MIX_RATE;
  const mix: LoadRequest[] = [];
  for (let i = 0; i < reads.length; i += 1) {
    mix.push(reads[i] as LoadRequest);
    if (i % 2 === 1) mix.push(sends[i % sends.length] as LoadRequest);
  }
  const quiet = await load({
    url,
    mode: 'open',
    rate,
    seconds: SECONDS,
    warmSeconds: WARM_SECONDS,
    connections: 64,
    requests: mix,
    samples: true,
  });
  failures.push(...failuresOf('quiet mix', quiet));
  const dayEnd = firstIndexAt(plan, plan.start + DAY_MS);
  const due = countRange(file, plan, 0, dayEnd);
  const busy = load({
    url,
    mode: 'open',
    rate,
    seconds: PURGE_SECONDS,
    warmSeconds: WARM_SECONDS,
    connections: 64,
    requests: mix,
    samples: true,
  });
  // The purge starts 2 s into the measured run (the load child starts, then warms up first).
  await new Promise((r) => setTimeout(r, WARM_SECONDS * 1000 + 2000));
  const started = Date.now();
  const stopAt = started + (PURGE_SECONDS - 4) * 1000;
  while (Date.now() < stopAt) {
    await housekeeping({ store: deps.store, blobs: deps.blobs, retentionDays: 29 }, deps.clock.now());
    if (countRange(file, plan, 0, dayEnd) === 0) break;
  }
  const ended = Date.now();
  const left = countRange(file, plan, 0, dayEnd);
  const result = await busy;
  failures.push(...failuresOf('purge mix', result));
  const during: number[] = [];
  const byKind: Record<string, number> = {};
  for (const [kind, list] of Object.entries(result.samples ?? {})) {
    const mine = list
      .filter(([at]) => at >= started && at <= ended)
      .map(([, latency]) => latency)
      .sort((a, b) => a - b);
    during.push(...mine);
    byKind[kind] = percentile(mine, 0.99);
  }
  during.sort((a, b) => a - b);
  const quietAll = Object.values(quiet.samples ?? {})
    .flatMap((list) => list.map(([, latency]) => latency))
    .sort((a, b) => a - b);
  return {
    rate,
    p99: percentile(during, 0.99),
    p999: percentile(during, 0.999),
    max: during[during.length - 1] ?? 0,
    quietP99: percentile(quietAll, 0.99),
    byKind,
    due,
    purged: due - left,
    seconds: (ended - started) / 1000,
  };
}
