import { SEND_BODY } from './bench-orgs.js';
import { drained, pause, type BenchContext } from './bench-context.js';
import { startBaseline, startMailroom, type BenchServer } from './child-servers.js';
import { openLoop, type OpenLoopFigures } from './open-loop.js';
import { cpuSeconds } from './proc-stats.js';

export interface LatencyRun extends OpenLoopFigures {
  name: string;
  /** CPU µs of the server process per request during the measured run. */
  cpuMicros: number;
}

let runSequence = 0;

/** One open-loop run; every request has a new Idempotency-Key and its organization's key (round-robin). */
async function openRun(
  ctx: BenchContext,
  server: BenchServer,
  seconds: number,
): Promise<OpenLoopFigures & { cpuMicros: number }> {
  const prefix = `o${process.pid}-${runSequence++}`;
  const { keys } = ctx;
  const cpu = cpuSeconds(server.pid);
  const figures = await openLoop({
    url: server.url,
    path: '/v1/send',
    rate: ctx.settings.rate,
    seconds,
    request: (i) => ({
      body: SEND_BODY,
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${keys[i % keys.length] ?? ''}`,
        'idempotency-key': `${prefix}-${i}`,
      },
    }),
  });
  return { ...figures, cpuMicros: ((cpuSeconds(server.pid) - cpu) * 1e6) / figures.sent };
}

/**
 * Goal 2: a constant arrival rate (500 sends a second for 30 s), open loop, against the durable
 * baseline and against `mailroom serve` with the worker on (and off, BENCH_WORKER_OFF=off to
 * skip; BENCH_WORKER_ON=off skips the worker-on run), each a fresh process from the same 300 organizations. Each server gets a
 * warm-up run at the same rate first, not counted: the first run after start showed 1.8 s stalls from start-up
 * alone. With the worker on, the benchmark then waits for the deliveries, so they do not land on
 * the next server.
 */
export async function latencyGoal(ctx: BenchContext): Promise<LatencyRun[]> {
  const { settings, sink } = ctx;
  const results: LatencyRun[] = [];
  /** Warm-up, then the measured run; `after` gets the number of sends accepted by both. */
  const measure = async (
    name: string,
    server: BenchServer,
    after: (accepted: number) => Promise<void> = async () => undefined,
  ) => {
    try {
      const warm = await openRun(ctx, server, settings.openWarmSeconds);
      await pause(1000);
      const measured = await openRun(ctx, server, settings.openSeconds);
      results.push({ name, ...measured });
      await after([warm, measured].reduce((sum, f) => sum + f.sent - f.non2xx - f.errors, 0));
    } finally {
      await server.stop();
    }
  };
  await measure('baseline (durable row)', await startBaseline(ctx.scratch('baseline-latency.db')));
  if (settings.workerOn) {
    const before = await sink.count();
    const on = await startMailroom({
      dataDir: ctx.freshDataDir('latency-on'),
      worker: 'on',
      logLevel: settings.logLevel,
      nodeArgs: settings.nodeArgs,
    });
    await measure('POST /v1/send, worker on', on, async (accepted) => {
      await drained(sink, before + accepted, 60_000);
    });
  }
  if (settings.workerOff) {
    await measure(
      'POST /v1/send, worker off',
      await startMailroom({
        dataDir: ctx.freshDataDir('latency-off'),
        worker: 'off',
        logLevel: settings.logLevel,
        nodeArgs: settings.nodeArgs,
      }),
    );
  }
  return results;
}

const ms = (n: number, width: number) => `${n.toFixed(1).padStart(width)} ms`;

export function printLatencyGoal(runs: readonly LatencyRun[], rate: number, seconds: number): void {
  console.log(
    `\nGoal 2, no stalls: open loop, ${rate} sends/s for ${seconds} s ` +
      `(latency from each request's due time), after a warm-up run not counted`,
  );
  for (const r of runs) {
    const errors = r.non2xx + r.errors > 0 ? `   non-2xx ${r.non2xx} errors ${r.errors}` : '';
    console.log(
      `  ${r.name.padEnd(26)} p50 ${ms(r.p50, 6)}   p99 ${ms(r.p99, 7)}   ` +
        `p99.9 ${ms(r.p999, 7)}   max ${ms(r.max, 7)}   ${r.cpuMicros.toFixed(0).padStart(5)} ` +
        `µs CPU/req   generator lag ≤ ${r.dispatchLagMax.toFixed(0)} ms${errors}`,
    );
  }
  const base = runs[0];
  if (base === undefined) return;
  for (const r of runs.slice(1)) {
    const p99 = r.p99 / base.p99;
    const p999 = r.p999 / base.p999;
    console.log(
      `  ratio ${r.name.replace('POST /v1/send, ', '')} / baseline: ` +
        `p99 ${p99.toFixed(2)}x (goal ≤ 2x: ${p99 <= 2 ? 'met' : 'not met'})   ` +
        `p99.9 ${p999.toFixed(2)}x (goal ≤ 3x: ${p999 <= 3 ? 'met' : 'not met'})   p50 ${(r.p50 / base.p50).toFixed(2)}x`,
    );
  }
}
