import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { freshStore, postgresAvailable } from '../support/stores.js';
import { deliveryHarness } from '../support/delivery.js';
import { tempDir } from '../support/cleanup.js';
import { waitFor } from '../support/smtp-sink.js';

const pgUp = await postgresAvailable();
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/mailroom.js');
const BUILT_CLI = path.join(ROOT, 'dist/src/cli/main.js');

beforeAll(() => {
  if (!fs.existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: run \`npm run build\` first (npm test does)`);
});

/**
 * A TCP proxy in front of PostgreSQL that can go silent: after `freeze()` it forwards nothing
 * either way and answers nothing, as a database behind a network partition (or a hung server)
 * does. A lock held by another session no longer serves: statement_timeout (15 s) ends a lock
 * wait on the server, and the stop then completes within the grace.
 */
async function silenceableProxy(target: {
  host: string;
  port: number;
}): Promise<{ port: number; freeze(): void; droppedBytes(): number; close(): Promise<void> }> {
  let frozen = false;
  let dropped = 0;
  const sockets: net.Socket[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.push(client, upstream);
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    client.on('data', (d: Buffer) => {
      if (frozen) dropped += d.length;
      else upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      if (!frozen) client.write(d);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => {
      if (!frozen) client.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    freeze: () => {
      frozen = true;
    },
    droppedBytes: () => dropped,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// PostgreSQL only: a database that stops answering over the network is what makes a stop hang
// (our own query timeout, 20 s, outlasts the stop's hard deadline, 15 s). SQLite is in-process.
describe('`mailroom worker` shutdown', () => {
  const h = deliveryHarness('postgres');

  it.skipIf(!pgUp)(
    'a stop that hangs (the database never answers) ends at the hard deadline: exit 1, logged',
    { timeout: 60_000 },
    async () => {
      const t = await freshStore('postgres');
      h.closer.defer(() => t.cleanup());
      const pgAt = new URL(t.database.url);
      const proxy = await silenceableProxy({ host: pgAt.hostname, port: Number(pgAt.port || 5432) });
      h.closer.defer(() => proxy.close());
      const viaProxy = new URL(t.database.url);
      viaProxy.port = String(proxy.port);

      const child = spawn(process.execPath, [BIN, 'worker'], {
        env: {
          PATH: process.env.PATH ?? '',
          MAILROOM_DATABASE_URL: viaProxy.toString(),
          MAILROOM_DATA_DIR: tempDir(h.closer),
          MAILROOM_WORKER_POLL_MS: '50',
          MAILROOM_LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d: Buffer) => {
        output += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        output += d.toString();
      });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
        child.on('exit', (code, signal) => resolve({ code, signal }));
      });
      h.closer.defer(async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGKILL');
          await exited;
        }
      });
      await waitFor(() => output.includes('mailroom worker running'), 15_000, 'the worker to start');

      // The database goes silent: the worker's next claim gets no answer, and so does its stop
      // (the pool cannot close under a query that never returns).
      proxy.freeze();
      await waitFor(() => proxy.droppedBytes() > 0, 10_000, 'the worker to send a query that gets no answer');

      const signalled = Date.now();
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        exited,
        new Promise<'hung'>((resolve) => {
          timer = setTimeout(() => resolve('hung'), 25_000);
        }),
      ]);
      clearTimeout(timer);
      expect(outcome, output).toEqual({ code: 1, signal: null });
      // The grace (10 s) plus 5 s, as `mailroom serve`.
      expect(Date.now() - signalled).toBeGreaterThanOrEqual(14_000);
      expect(output).toContain('shutdown took too long; exiting');
    },
  );
});
