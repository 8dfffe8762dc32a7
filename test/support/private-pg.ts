import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './smtp-sink.js';

/**
 * A private PostgreSQL 15 cluster for drills that stop, restart or crash the database: its own
 * data dir (a temp dir owned by `postgres`) and port, never the shared server on 5432. Started
 * and stopped as the `postgres` user through `su`, since PostgreSQL refuses to run as root.
 */

/** Debian's PostgreSQL binaries: 15 where present (the machine's), else the newest installed. */
function pgBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    : [];
  const chosen = versions.includes('15') ? '15' : (versions.sort((a, b) => Number(b) - Number(a))[0] ?? '15');
  return path.join(root, chosen, 'bin');
}

export const PG_BIN = process.env.MAILROOM_TEST_PG_BIN ?? pgBin();

export interface PrivateCluster {
  port: number;
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  dir: string;
  stop(mode?: 'fast' | 'immediate'): void;
  start(): void;
  restart(mode?: 'fast' | 'immediate'): void;
  /** The server's log, for failure messages. */
  log(): string;
  /** Stops it (immediate) and removes its directory; safe to call twice. */
  destroy(): void;
}

/**
 * Whether a private cluster can be made here: initdb present and `postgres` a user. Under CI
 * its absence is an error, never a silent skip.
 */
export function privateClusterPossible(): boolean {
  let ok = fs.existsSync(path.join(PG_BIN, 'initdb'));
  if (ok) {
    try {
      execFileSync('id', ['postgres'], { stdio: 'ignore' });
    } catch {
      ok = false;
    }
  }
  if (!ok && process.env.CI === 'true')
    throw new Error(`a private PostgreSQL cluster is required under CI: no ${PG_BIN}/initdb or no postgres user`);
  if (!ok) console.warn(`\n*** ${PG_BIN}/initdb or the postgres user is missing: the PostgreSQL restart drill is SKIPPED ***\n`);
  return ok;
}

function asPostgres(command: string): string {
  return execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', command], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

const q = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

export async function startPrivateCluster(): Promise<PrivateCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-pg-'));
  fs.chmodSync(dir, 0o755);
  execFileSync('chown', ['postgres:postgres', dir]);
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  const port = await freePort();
  let destroyed = false;
  const ctl = (args: string): string => asPostgres(`${PG_BIN}/pg_ctl -D ${q(data)} ${args}`);
  // -w: pg_ctl returns once the server accepts connections (or is down, for stop).
  const serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const startArgs = `-w -t 60 -l ${q(logFile)} -o ${q(serverOptions)}`;
  const cluster: PrivateCluster = {
    port,
    dir,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: (mode = 'fast') => {
      ctl(`-w -t 60 -m ${mode} stop`);
    },
    start: () => {
      ctl(`${startArgs} start`);
    },
    restart: (mode = 'fast') => {
      ctl(`${startArgs} -m ${mode} restart`);
    },
    log: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : ''),
    destroy: () => {
      if (destroyed) return;
      destroyed = true;
      try {
        ctl('-w -t 30 -m immediate stop');
      } catch {
        // Not running (never started, or already stopped).
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    asPostgres(`${PG_BIN}/initdb -D ${q(data)} -A trust -U postgres --no-sync >/dev/null`);
    cluster.start();
  } catch (err) {
    cluster.destroy();
    throw err;
  }
  return cluster;
}
