import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAILROOM_BIN } from './bench-orgs.js';
import { askChild } from './rounds.js';

/**
 * The processes of the send goals, each in its own process as in production, so the load
 * generator's CPU is not charged to the server and each server's CPU and RSS can be read from
 * /proc: the durable baseline (baseline-server.ts), a real `mailroom serve`, and the loopback
 * SMTP sink the worker delivers to (smtp-sink.ts).
 */
export interface BenchServer {
  url: string;
  pid: number;
  stop: () => Promise<void>;
}

export interface Sink {
  port: number;
  /** Messages the sink has received so far. */
  count: () => Promise<number>;
  stop: () => Promise<void>;
}

const here = path.dirname(fileURLToPath(import.meta.url));

// A benchmark that dies (an error, Ctrl+C) must not leave its servers running: they would hold
// the terminal's pipes and load the machine for the next run.
const children = new Set<ChildProcess>();
function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => process.exit(130));
}

function exited(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export async function startSink(): Promise<Sink> {
  const child = track(fork(path.join(here, 'smtp-sink.js'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }));
  const ask = askChild(child);
  const port = await ask('', (m) => m.port);
  return {
    port,
    count: () => ask('count', (m) => m.count),
    stop: async () => {
      child.send('stop');
      await exited(child, 5000);
    },
  };
}

/** The plain durable baseline of issue 16 on `dbFile` (one row per request, WAL, synchronous=FULL). */
export async function startBaseline(dbFile: string): Promise<BenchServer> {
  const child = track(fork(path.join(here, 'baseline-server.js'), [dbFile], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }));
  const port = await askChild(child)('', (m) => m.port);
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid ?? 0,
    stop: async () => {
      child.send('stop');
      await exited(child, 10_000);
    },
  };
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface MailroomOptions {
  dataDir: string;
  /** MAILROOM_WORKER: the in-process delivery worker (on, the default of `mailroom serve`). */
  worker: 'on' | 'off';
  /** MAILROOM_LOG_LEVEL: info (one line per request, the default) as a user runs it. */
  logLevel: string;
  /** Node options for the server, e.g. `--cpu-prof --cpu-prof-dir=DIR` (BENCH_NODE_ARGS; NODE_OPTIONS refuses --cpu-prof). */
  nodeArgs?: readonly string[];
}

/**
 * `mailroom serve` as a user runs it (bin/mailroom.js, SQLite in MAILROOM_DATA_DIR), its
 * output appended to `serve.log` in the data directory as a service manager would, so reading
 * it costs the benchmark nothing. Ready when it prints "mailroom listening"; SIGTERM stops it.
 */
export async function startMailroom(o: MailroomOptions): Promise<BenchServer> {
  const port = await freePort();
  const logFile = path.join(o.dataDir, 'serve.log');
  const log = fs.openSync(logFile, 'a');
  const child = track(
    spawn(process.execPath, [...(o.nodeArgs ?? []), MAILROOM_BIN, 'serve'], {
      env: {
        ...process.env,
        MAILROOM_DATA_DIR: o.dataDir,
        MAILROOM_PORT: String(port),
        MAILROOM_HOST: '127.0.0.1',
        MAILROOM_WORKER: o.worker,
        MAILROOM_LOG_LEVEL: o.logLevel,
      },
      stdio: ['ignore', log, log],
    }),
  );
  fs.closeSync(log);
  const deadline = Date.now() + 60_000;
  while (!fs.readFileSync(logFile, 'utf8').includes('mailroom listening')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`mailroom serve did not start; its output:\n${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid ?? 0,
    stop: async () => {
      child.kill('SIGTERM');
      await exited(child, 20_000);
    },
  };
}
