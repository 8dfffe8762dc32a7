import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyBenchOrgs, benchKeys, copyDataDir } from './bench-orgs.js';
import { startSink, type Sink } from './child-servers.js';

/** Settings of the send goals, from the environment (defaults in parentheses). */
export interface SendSettings {
  /** BENCH_SECONDS (10): length of one closed-loop round. */
  seconds: number;
  /** BENCH_ROUNDS (3): closed-loop rounds, alternating baseline and mailroom. */
  rounds: number;
  /** BENCH_CONNECTIONS (50). */
  connections: number;
  /** BENCH_WARM_SECONDS (3): closed-loop warm-up of each server, not counted. */
  warmSeconds: number;
  /** BENCH_RATE (500) sends a second for BENCH_OPEN_SECONDS (30), after BENCH_OPEN_WARM_SECONDS (5) not counted. */
  rate: number;
  openSeconds: number;
  openWarmSeconds: number;
  /** BENCH_WORKER_OFF (on): also the open loop against mailroom with MAILROOM_WORKER=off. */
  workerOff: boolean;
  /** BENCH_WORKER_ON (on): the open loop against mailroom with its worker on (off: only the worker-off run). */
  workerOn: boolean;
  /** BENCH_LOG_LEVEL (info, `mailroom serve`'s default: one line per request, to a file). */
  logLevel: string;
  /** BENCH_NODE_ARGS (none): Node options for every `mailroom serve`, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
  nodeArgs: string[];
}

/** The heap flags mailroom ships with (package.json "start", bin/mailroom.js, deploy/*.service). */
export const SERVE_NODE_FLAGS = ['--max-semi-space-size=4', '--max-old-space-size=1024'] as const;

export function sendSettings(env: NodeJS.ProcessEnv = process.env): SendSettings {
  const num = (name: string, fallback: number) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
    return value;
  };
  return {
    seconds: num('BENCH_SECONDS', 10),
    rounds: Math.round(num('BENCH_ROUNDS', 3)),
    connections: Math.round(num('BENCH_CONNECTIONS', 50)),
    warmSeconds: num('BENCH_WARM_SECONDS', 3),
    rate: num('BENCH_RATE', 500),
    openSeconds: num('BENCH_OPEN_SECONDS', 30),
    openWarmSeconds: num('BENCH_OPEN_WARM_SECONDS', 5),
    workerOff: (env.BENCH_WORKER_OFF ?? 'on') !== 'off',
    workerOn: (env.BENCH_WORKER_ON ?? 'on') !== 'off',
    logLevel: env.BENCH_LOG_LEVEL ?? 'info',
    // `npm start`, bin/mailroom.js and the systemd units run Node with these heap flags (see the
    // README's Performance section); BENCH_NODE_ARGS adds to them (a later flag wins).
    nodeArgs: [...SERVE_NODE_FLAGS, ...(env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)],
  };
}

/**
 * What every send goal shares: one SMTP sink (its own process), a data directory with the 300
 * organizations applied once (each server starts from a copy), the private keys in a file for
 * the load generators, and a scratch directory removed at the end.
 */
export interface BenchContext {
  settings: SendSettings;
  sink: Sink;
  keys: string[];
  keysFile: string;
  /** A new data directory holding the 300 organizations and an empty queue. */
  freshDataDir: (name: string) => string;
  /** A new path under the scratch directory. */
  scratch: (name: string) => string;
  close: () => Promise<void>;
}

export async function openBenchContext(settings: SendSettings): Promise<BenchContext> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-bench-goals-'));
  const sink = await startSink();
  try {
    const template = path.join(root, 'orgs-template');
    await applyBenchOrgs(template, sink.port);
    const keys = benchKeys();
    const keysFile = path.join(root, 'keys.txt');
    fs.writeFileSync(keysFile, `${keys.join('\n')}\n`);
    return {
      settings,
      sink,
      keys,
      keysFile,
      freshDataDir: (name) => {
        const dir = path.join(root, name);
        copyDataDir(template, dir);
        return dir;
      },
      scratch: (name) => path.join(root, name),
      close: async () => {
        await sink.stop();
        fs.rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await sink.stop();
    fs.rmSync(root, { recursive: true, force: true });
    throw err;
  }
}

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until the sink has received `expected` messages in all (the worker's backlog of the run
 * just measured), so it does not land on the next run; gives up after `timeoutMs`. Returns the
 * seconds it took, or undefined when it gave up.
 */
export async function drained(sink: Sink, expected: number, timeoutMs = 120_000): Promise<number | undefined> {
  const started = performance.now();
  while ((await sink.count()) < expected) {
    if (performance.now() - started > timeoutMs) return undefined;
    await pause(100);
  }
  return (performance.now() - started) / 1000;
}
