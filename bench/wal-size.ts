import fs from 'node:fs';
import path from 'node:path';
import { SEND_BODY } from './bench-orgs.js';
import { drained, pause, type BenchContext } from './bench-context.js';
import { startMailroom } from './child-servers.js';
import { httpLoad, type LoadFigures } from './http-load.js';

/** What the WAL part measured: the file's size every second of the run, and the load. */
export interface WalFigures {
  load: LoadFigures;
  /** [seconds since the start, WAL MB, database MB], one a second. */
  samples: Array<[number, number, number]>;
  maxMb: number;
  finalMb: number;
  /** Seconds the worker took to deliver the run once it ended (undefined: gave up). */
  drainSeconds: number | undefined;
}

const mb = (file: string) => (fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0) / 1e6;

/**
 * Issue 25 §2: the SQLite WAL file's size over BENCH_WAL_SECONDS (60) of the highest sustained
 * rate, a closed loop of BENCH_CONNECTIONS (50) sending as fast as they can with the worker on
 * (it reads and writes the same file: claims, outcomes), against a real `mailroom serve`.
 */
export async function walBench(ctx: BenchContext, seconds: number): Promise<WalFigures> {
  const dataDir = ctx.freshDataDir('wal-data');
  const db = path.join(dataDir, 'mailroom.db');
  const server = await startMailroom({ dataDir, worker: 'on', logLevel: ctx.settings.logLevel, nodeArgs: ctx.settings.nodeArgs });
  try {
    await pause(3000);
    const before = await ctx.sink.count();
    const samples: Array<[number, number, number]> = [];
    const started = performance.now();
    let maxMb = 0;
    const sample = () => {
      const wal = mb(`${db}-wal`);
      maxMb = Math.max(maxMb, wal);
      return wal;
    };
    // The load runs in a worker thread: this loop samples every 100 ms, keeps one a second.
    const every = setInterval(() => {
      const wal = sample();
      const t = (performance.now() - started) / 1000;
      if (t >= samples.length + 1) samples.push([Math.round(t), wal, mb(db)]);
    }, 100);
    const load = await httpLoad({
      url: `${server.url}/v1/send`,
      body: SEND_BODY,
      headers: { 'content-type': 'application/json' },
      seconds,
      connections: ctx.settings.connections,
      uniqueIdempotencyKey: true,
      keysFile: ctx.keysFile,
    });
    clearInterval(every);
    const drainSeconds = await drained(ctx.sink, before + load.ok);
    return { load, samples, maxMb, finalMb: sample(), drainSeconds };
  } finally {
    await server.stop();
  }
}

export function printWalBench(f: WalFigures, connections: number): void {
  const errors = f.load.non2xx + f.load.errors > 0 ? `, non-2xx ${f.load.non2xx}, errors ${f.load.errors}` : '';
  console.log('');
  console.log(
    `SQLite WAL under the highest sustained rate (issue 25 §2): ` +
      `closed loop, ${connections} connections, ${f.load.seconds} s, worker on`,
  );
  console.log(
    `  ${f.load.rps.toFixed(0)} sends/s (p50 ${f.load.p50} ms, p99 ${f.load.p99} ms), ${f.load.ok} accepted${errors}; ` +
      `worker drained the run ${f.drainSeconds === undefined ? 'not within 120 s' : `in ${f.drainSeconds.toFixed(1)} s more`}`,
  );
  const row = f.samples
    .filter(([t]) => t % 5 === 0)
    .map(([t, wal, dbMb]) => `${String(t).padStart(3)} s ${wal.toFixed(1).padStart(5)}/${dbMb.toFixed(0)}`);
  for (let i = 0; i < row.length; i += 6) console.log(`  WAL/database MB at ${row.slice(i, i + 6).join('   ')}`);
  console.log(
    `  WAL max ${f.maxMb.toFixed(1)} MB (sampled every 100 ms), after the run and its delivery ${f.finalMb.toFixed(1)} MB`,
  );
}
