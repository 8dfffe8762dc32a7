import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { seedOrg } from '../support/seed.js';
import { eventMessageIds, statusCounts } from '../support/db.js';
import { freshStore } from '../support/stores.js';
import { type Closer, tempDir } from '../support/cleanup.js';
import { CONTACT_TEMPLATE, deliveryHarness, insertQueued, smtpService } from '../support/delivery.js';
import { startSink, waitFor } from '../support/smtp-sink.js';
import { describeDialects } from '../support/dialects.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/mailroom.js');
const BUILT_CLI = path.join(ROOT, 'dist/src/cli/main.js');

interface WorkerProcess {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

function spawnWorker(env: Record<string, string>, closer: Closer): WorkerProcess {
  const child = spawn(process.execPath, [BIN, 'worker'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  closer.defer(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  return { child, exited, output: () => output };
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
    }),
  ]);
}

beforeAll(() => {
  if (!fs.existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: run \`npm run build\` first (npm test does)`);
});

describeDialects('crash safety of `mailroom worker` on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)(
    'SIGKILL mid-batch, then a second worker: nothing lost, all sent, same Message-ID on duplicates',
    { timeout: 90_000 },
    async () => {
      const t = await freshStore(dialect);
      h.closer.defer(() => t.cleanup());
      // A slow relay: 50 ms per DATA reply, so a batch of 50 over 5 connections takes ~0.5 s.
      const sink = await startSink({ dataDelayMs: 50 }, h.closer);
      await seedOrg(t.store, { credits: 5000, services: [smtpService(sink.port)], templates: [CONTACT_TEMPLATE] });
      const total = 200;
      // The CLI worker runs on the wall clock: the messages are due now.
      const ids = await insertQueued(t.store, total, Date.now());
      const headerIds = new Set(ids.map((id) => `<${id}@mailroom.test>`));

      const env = {
        MAILROOM_DATABASE_URL: t.database.url,
        MAILROOM_DATA_DIR: tempDir(h.closer),
        MAILROOM_WORKER_LEASE_SECONDS: '2',
        MAILROOM_WORKER_POLL_MS: '50',
        MAILROOM_WORKER_BATCH: '50',
        MAILROOM_LOG_LEVEL: 'warn',
      };

      const first = spawnWorker(env, h.closer);
      await waitFor(() => sink.received.length >= 25, 30_000, 'the first worker to deliver 25 messages');
      first.child.kill('SIGKILL');
      expect(await within(first.exited, 10_000, 'SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
      const receivedAtKill = sink.received.length;
      const atKill = await statusCounts(t.store);
      // The kill landed mid-batch: some messages were claimed and not finished.
      expect(receivedAtKill).toBeLessThan(total);
      expect(atKill.sending ?? 0).toBeGreaterThan(0);

      const second = spawnWorker(env, h.closer);
      await waitFor(
        async () => {
          const c = await statusCounts(t.store);
          return (c.queued ?? 0) === 0 && (c.sending ?? 0) === 0;
        },
        30_000,
        'every message to reach a final state',
      );

      // Graceful stop on SIGTERM, in bounded time.
      second.child.kill('SIGTERM');
      expect(await within(second.exited, 15_000, 'SIGTERM shutdown'), second.output()).toEqual({ code: 0, signal: null });

      expect(await statusCounts(t.store)).toEqual({ sent: total });
      const received = sink.received.map((r) => r.messageId ?? '');
      // Every message arrived at least once, and only our messages (a duplicate has the same Message-ID).
      expect(new Set(received)).toEqual(headerIds);
      const duplicates = received.length - headerIds.size;
      expect(duplicates).toBeGreaterThanOrEqual(0);
      // Only messages the killed worker had claimed can arrive twice.
      expect(duplicates).toBeLessThanOrEqual(atKill.sending ?? 0);

      // The reaper gave the dead worker's claims back: their timeline says so.
      const reaped = await eventMessageIds(t.store, 'queued', 'lease_expired');
      expect(reaped.length).toBe(atKill.sending ?? 0);
    },
  );
});
