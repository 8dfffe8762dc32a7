import { SEND_BODY } from './bench-orgs.js';
import { drained, pause, type BenchContext } from './bench-context.js';
import { startBaseline, startMailroom, type BenchServer } from './child-servers.js';
import { httpLoad, type LoadFigures } from './http-load.js';
import { cpuSeconds, rssMb, sampleRss } from './proc-stats.js';
import { median } from './rounds.js';

/** One closed-loop run against one server, with that server's CPU time per accepted request. */
export interface RunFigures extends LoadFigures {
  /** CPU µs of the server process (every thread) per 2xx answer, during the run. */
  cpuMicros: number;
}

/** Goal 5's figures, read from the mailroom process of the goal-1 runs. */
export interface MemoryFigures {
  /** RSS MB after start and a settle, 300 organizations, empty queue, no request yet. */
  idleAfterStart: number;
  /** Highest RSS MB sampled every 100 ms from the warm-up to the end of the last run. */
  peak: number;
  /** RSS MB after each run, once its deliveries are done and a settle. */
  idleAfterRuns: number[];
}

export interface SendGoalFigures {
  baseline: RunFigures[];
  mailroom: RunFigures[];
  /** Seconds the worker took after each mailroom run to deliver its backlog (undefined: gave up). */
  drainSeconds: Array<number | undefined>;
  /** false with BENCH_SEND_WORKER=off: the accept path alone, nothing delivered. */
  workerOn: boolean;
  memory: MemoryFigures;
}

async function run(ctx: BenchContext, server: BenchServer, seconds: number, amount?: number): Promise<RunFigures> {
  const cpu = cpuSeconds(server.pid);
  const figures = await httpLoad({
    url: `${server.url}/v1/send`,
    body: SEND_BODY,
    headers: { 'content-type': 'application/json' },
    seconds,
    connections: ctx.settings.connections,
    uniqueIdempotencyKey: true,
    keysFile: ctx.keysFile,
    amount,
  });
  const used = cpuSeconds(server.pid) - cpu;
  return { ...figures, cpuMicros: (used * 1e6) / Math.max(figures.ok, 1) };
}

/**
 * Goal 1 (and goal 5's figures, from the same mailroom process): 50 connections, closed loop,
 * each request its own Idempotency-Key and its organization's private key, round-robin over the
 * 300 organizations. Both servers are warmed, then rounds alternate baseline and mailroom so a
 * busy moment of a shared machine hits both. After each mailroom run the benchmark waits for
 * the worker to deliver that run's messages to the sink (the worker is on, as `mailroom serve`
 * runs it), so its backlog does not land on the baseline's next run; then it reads the idle RSS.
 * `withBaseline: false` runs mailroom alone (BENCH_ONLY=memory).
 */
export async function sendGoal(ctx: BenchContext, withBaseline: boolean): Promise<SendGoalFigures> {
  const { settings, sink } = ctx;
  const baselineServer = withBaseline ? await startBaseline(ctx.scratch('baseline-send.db')) : undefined;
  // BENCH_SEND_WORKER=off measures the accept path alone (README, Performance): nothing is
  // delivered then, so there is no drain to wait for.
  const workerOn = process.env.BENCH_SEND_WORKER !== 'off';
  const mailroom = await startMailroom({
    dataDir: ctx.freshDataDir('send-data'),
    worker: workerOn ? 'on' : 'off',
    logLevel: settings.logLevel,
    nodeArgs: settings.nodeArgs,
  });
  const drain = (expected: number) => (workerOn ? drained(sink, expected) : Promise.resolve(undefined));
  try {
    // A few seconds' settle: start-up work (migrations check, caches, the worker's first poll) ends.
    await pause(3000);
    const idleAfterStart = rssMb(mailroom.pid);
    const rss = sampleRss(mailroom.pid);
    let expected = await sink.count();
    const mailroomRun = async (seconds: number, amount?: number) => {
      const figures = await run(ctx, mailroom, seconds, amount);
      expected += figures.ok;
      return figures;
    };
    // Warm-up: every organization twice first (its template compiled, its SMTP pool opened: the
    // cold cost of 300 organizations, which a slow moment of the machine would otherwise leave
    // for the measured runs), then BENCH_WARM_SECONDS of load.
    const everyOrgTwice = 2 * ctx.keys.length;
    if (baselineServer !== undefined) {
      await run(ctx, baselineServer, 0, everyOrgTwice);
      await run(ctx, baselineServer, settings.warmSeconds);
    }
    await mailroomRun(0, everyOrgTwice);
    await mailroomRun(settings.warmSeconds);
    await drain(expected);
    const baseline: RunFigures[] = [];
    const runs: RunFigures[] = [];
    const drainSeconds: Array<number | undefined> = [];
    const idleAfterRuns: number[] = [];
    for (let r = 0; r < settings.rounds; r++) {
      if (baselineServer !== undefined) {
        await pause(1000);
        baseline.push(await run(ctx, baselineServer, settings.seconds));
      }
      await pause(1000);
      runs.push(await mailroomRun(settings.seconds));
      drainSeconds.push(await drain(expected));
      await pause(2000);
      idleAfterRuns.push(rssMb(mailroom.pid));
    }
    return { baseline, mailroom: runs, drainSeconds, workerOn, memory: { idleAfterStart, peak: rss.stop(), idleAfterRuns } };
  } finally {
    await mailroom.stop();
    await baselineServer?.stop();
  }
}

const fixed = (n: number, width: number, digits = 0) => n.toFixed(digits).padStart(width);

function runLine(name: string, f: RunFigures): string {
  const errors = f.non2xx + f.errors > 0 ? `   non-2xx ${f.non2xx} errors ${f.errors}` : '';
  return (
    `${name.padEnd(24)} ${fixed(f.rps, 7)} req/s   p50 ${fixed(f.p50, 3)} ` +
    `ms   p99 ${fixed(f.p99, 4)} ms   ${fixed(f.cpuMicros, 5)} µs CPU/req${errors}`
  );
}

function spread(values: readonly number[], digits = 2, unit = 'x'): string {
  return `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}${unit}`;
}

/** Medians of each server over the rounds (each figure's own median), for the summary lines. */
function medianRun(runs: readonly RunFigures[]): RunFigures {
  const pick = (f: (r: RunFigures) => number) => median(runs.map(f));
  return {
    rps: pick((r) => r.rps),
    p50: pick((r) => r.p50),
    p99: pick((r) => r.p99),
    ok: pick((r) => r.ok),
    seconds: pick((r) => r.seconds),
    non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
    cpuMicros: pick((r) => r.cpuMicros),
  };
}

export function printSendGoal(f: SendGoalFigures, seconds: number, connections: number): void {
  console.log(
    `\nGoal 1, send vs durable baseline (≥ 0.35x): closed ` +
      `loop, ${connections} connections, ${f.mailroom.length} alternating rounds of ${seconds} s`,
  );
  const ratios = f.mailroom.map((m, i) => m.rps / (f.baseline[i]?.rps ?? Number.NaN));
  const cpuRatios = f.mailroom.map((m, i) => (f.baseline[i]?.cpuMicros ?? Number.NaN) / m.cpuMicros);
  f.mailroom.forEach((m, i) => {
    const b = f.baseline[i];
    if (b !== undefined) console.log(`  round ${i + 1} ${runLine('baseline', b).trimEnd()}`);
    const drain = f.drainSeconds[i];
    const worker = f.workerOn ? `worker drained the run in ${drain === undefined ? '> 120' : drain.toFixed(1)} s` : 'worker off';
    const tail = `   ratio ${(ratios[i] ?? Number.NaN).toFixed(2)}x   (${worker})`;
    console.log(`  round ${i + 1} ${runLine('mailroom send', m)}${tail}`);
  });
  const b = medianRun(f.baseline);
  const m = medianRun(f.mailroom);
  console.log(`  median  ${runLine('baseline (durable row)', b)}`);
  console.log(`  median  ${runLine('POST /v1/send (SQLite)', m)}`);
  const ratio = median(ratios);
  console.log(
    `  ratio send/baseline: throughput ${ratio.toFixed(2)}x (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')}; ` +
      `spread ${spread(ratios)})  goal ≥ 0.35x: ${ratio >= 0.35 ? 'met' : 'not met'}`,
  );
  console.log(
    `  ratio of CPU per request, baseline/send: ${median(cpuRatios).toFixed(2)}x ` +
      `(spread ${spread(cpuRatios)}): the throughput ratio if each server had a core to itself`,
  );
}

export function printMemoryGoal(m: MemoryFigures, runs: number): void {
  const growth = (m.idleAfterRuns.at(-1) ?? Number.NaN) - (m.idleAfterRuns[0] ?? Number.NaN);
  console.log(`\nGoal 5, memory of the mailroom process (VmRSS; 300 organizations, worker on):`);
  console.log(
    `  idle after start          ${fixed(m.idleAfterStart, 5, 1)} MB   goal ≤ 120 ` +
      `MB: ${m.idleAfterStart <= 120 ? 'met' : 'not met'}   (${(m.idleAfterStart / 120).toFixed(2)}x the goal)`,
  );
  console.log(
    `  peak during the runs      ${fixed(m.peak, 5, 1)} MB   goal ≤ 250 ` +
      `MB: ${m.peak <= 250 ? 'met' : 'not met'}   (${(m.peak / 250).toFixed(2)}x the goal)`,
  );
  console.log(
    `  idle after each of ${runs} runs ${m.idleAfterRuns.map((r) => `${r.toFixed(1)} MB`).join(', ')}   ` +
      `growth first→last ${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MB`,
  );
}
