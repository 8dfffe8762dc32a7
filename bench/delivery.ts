import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { alternateRounds, askChild, median } from './rounds.js';
import { applyConfig } from '../src/admin/apply.js';
import { loadConfig } from '../src/config/env.js';
import { systemClock } from '../src/domain/clock.js';
import { newSortableId, sha256 } from '../src/domain/ids.js';
import { LocalPacer } from '../src/delivery/pacing.js';
import { smtpTransport } from '../src/delivery/transports/smtp.js';
import { DeliveryWorker } from '../src/delivery/worker.js';
import type { Service } from '../src/domain/types.js';
import { createMetrics } from '../src/observability/metrics.js';
import { openStore } from '../src/storage/store.js';
import type { RenderedEmail } from '../src/templates/render.js';

export interface DeliveryFigures {
  raw: number;
  queued: number;
  ratio: number;
  /** Each round's queue/raw ratio. */
  ratios: number[];
  /** Median CPU µs this process spent per message on each path. */
  rawCpuMicros: number;
  queueCpuMicros: number;
  messages: number;
}

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

function email(i: number): RenderedEmail {
  return {
    subject: `Bench message ${i}`,
    from: { name: 'Bench', address: 'bench@mailroom.test' },
    reply_to: [],
    to: [{ name: '', address: `rcpt${i % 50}@example.com` }],
    cc: [],
    bcc: [],
    html: `<p>Hello ${i}</p>`.repeat(20),
    text: `Hello ${i}\n`.repeat(20),
  };
}

/** The sink runs in a child process (smtp-sink.ts); messages are counted there. */
async function sink(): Promise<{ port: number; count: () => Promise<number>; close: () => Promise<void> }> {
  const child = fork(fileURLToPath(new URL('./smtp-sink.js', import.meta.url)), [], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const ask = askChild(child);
  const port = await ask('', (m) => m.port);
  return {
    port,
    count: () => ask('count', (m) => m.count),
    close: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send('stop');
      }),
  };
}

/**
 * Messages per second to a loopback sink in another process: nodemailer's pool driven
 * directly (the transport mailroom uses, 50 sends in flight) against the full queue path
 * (claim, send, record) on SQLite with its default synchronous=FULL. The two alternate for
 * `rounds` rounds, so a slow moment of this shared 2-core machine hits both alike; the figures
 * are medians, the ratio the median of each round's ratio.
 *
 * The worker runs its transports in their own thread, as `mailroom serve` does; the raw path
 * drives nodemailer on the event loop, as an application calling nodemailer itself would. The
 * CPU figures count every thread of this process, so they show what the queue costs even where
 * the thread hides it from the throughput.
 */
export async function deliveryBench(messages: number, rounds = 5): Promise<DeliveryFigures> {
  const smtp = await sink();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-bench-delivery-'));
  try {
    const service: Service = {
      org_id: 'bench',
      id: 'sink',
      provider: 'smtp',
      is_default: true,
      max_per_second: null,
      version: 1,
      created_at: 0,
      updated_at: 0,
      settings: { smtp: { host: '127.0.0.1', port: smtp.port, secure: false, user: '', pass: '', dkim: null } },
    };

    // CPU time of this process (the sink's is its own) per message, a steadier figure than
    // throughput on a shared machine: what the queue adds to a send, in µs.
    const rawCpu: number[] = [];
    const queueCpu: number[] = [];
    const cpuMicros = (since: NodeJS.CpuUsage) => {
      const d = process.cpuUsage(since);
      return d.user + d.system;
    };
    const transport = smtpTransport(service, { dataDir: dir });
    const rawRun = async (count: number): Promise<number> => {
      let next = 0;
      const started = performance.now();
      const cpu = process.cpuUsage();
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          while (next < count) {
            const i = next++;
            await transport.send({ messageId: `raw${i}`, headerMessageId: `<raw${i}@bench>`, email: email(i), attachments: [] });
          }
        }),
      );
      rawCpu.push(cpuMicros(cpu) / count);
      return count / ((performance.now() - started) / 1000);
    };

    const config = loadConfig({ MAILROOM_DATA_DIR: dir, MAILROOM_LOG_LEVEL: 'warn' });
    const store = await openStore(config.databaseUrl, { clock: systemClock });
    await applyConfig(store, {
      organizations: [
        {
          id: 'bench',
          plan: 'business_200k',
          credits: 1_000_000,
          services: [{ id: 'sink', provider: 'smtp', default: true, smtp: { host: '127.0.0.1', port: smtp.port } }],
        },
      ],
    });
    // Queued the way the send path queues them (sortable ids), in one transaction. `onEnd`
    // runs after the last insert, before the commit.
    let sequence = 0;
    const enqueue = (count: number, onEnd: () => void = () => undefined) =>
      store.transaction(async (tx) => {
        const now = systemClock.now();
        for (let n = 0; n < count; n++) {
          const e = email(sequence++);
          const id = newSortableId('msg', now);
          await tx.messages.insert({
            id,
            org_id: 'bench',
            template_id: 'bench',
            service_id: 'sink',
            status: 'queued',
            status_token_hash: sha256(id),
            key_type: 'private',
            content: JSON.stringify(e),
            subject: e.subject,
            header_message_id: `<${id}@bench>`,
            attachments: null,
            credit_taken: true,
            idempotency_key: null,
            recipients: e.to.map((a) => ({ kind: 'to' as const, email: a.address })),
            created_at: now,
          });
        }
        onEnd();
      });
    const worker = new DeliveryWorker(
      { store, clock: systemClock, dataDir: dir, pacer: new LocalPacer(systemClock), metrics: createMetrics(), logger: quiet },
      { batchSize: 50 },
    );
    const received = async (before: number, count: number): Promise<void> => {
      while ((await smtp.count()) - before < count) await new Promise((r) => setTimeout(r, 5));
    };
    const queueRun = async (count: number): Promise<number> => {
      // The clock starts before the commit: the worker may claim the first messages as soon
      // as they are committed, and the queue is charged for the commit, not credited with it.
      const before = await smtp.count();
      let started = 0;
      let cpu = process.cpuUsage();
      await enqueue(count, () => {
        started = performance.now();
        cpu = process.cpuUsage();
      });
      worker.nudge();
      await received(before, count);
      queueCpu.push(cpuMicros(cpu) / count);
      return count / ((performance.now() - started) / 1000);
    };

    // Warm both paths (JIT, pool sockets) before measuring either.
    worker.start();
    const figures = await alternateRounds(rawRun, queueRun, messages, rounds, () => {
      rawCpu.length = 0;
      queueCpu.length = 0;
    });
    await transport.close();
    await worker.stop();
    await store.close();
    return { ...figures, rawCpuMicros: median(rawCpu), queueCpuMicros: median(queueCpu), messages };
  } finally {
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
