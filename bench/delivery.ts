import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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
  const child = fork(fileURLToPath(new URL('./smtp-sink.js', import.meta.url)), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const ask = <T>(message: string, pick: (m: Record<string, number>) => T | undefined): Promise<T> => new Promise((resolve) => {
    const onMessage = (m: Record<string, number>) => {
      const value = pick(m);
      if (value !== undefined) {
        child.off('message', onMessage);
        resolve(value);
      }
    };
    child.on('message', onMessage);
    if (message !== '') child.send(message);
  });
  const port = await ask('', (m) => m.port);
  return {
    port,
    count: () => ask('count', (m) => m.count),
    close: () => new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.send('stop');
    }),
  };
}

/**
 * Messages per second to a loopback sink in another process: nodemailer's pool driven
 * directly (the transport mailroom uses, 50 sends in flight) against the full queue path
 * (claim, send, record) on SQLite with its default synchronous=FULL.
 */
export async function deliveryBench(messages: number): Promise<DeliveryFigures> {
  const smtp = await sink();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-bench-delivery-'));
  try {
    const service: Service = {
      org_id: 'bench', id: 'sink', provider: 'smtp', is_default: true, max_per_second: null, version: 1, created_at: 0, updated_at: 0,
      settings: { smtp: { host: '127.0.0.1', port: smtp.port, secure: false, user: '', pass: '', dkim: null } },
    };

    const transport = smtpTransport(service, { dataDir: dir });
    const rawRun = async (count: number): Promise<number> => {
      let next = 0;
      const started = performance.now();
      await Promise.all(Array.from({ length: 50 }, async () => {
        while (next < count) {
          const i = next++;
          await transport.send({ messageId: `raw${i}`, headerMessageId: `<raw${i}@bench>`, email: email(i), attachments: [] });
        }
      }));
      return count / ((performance.now() - started) / 1000);
    };
    // Warm both paths' code (JIT, pool sockets) before measuring either.
    await rawRun(Math.min(500, messages));
    const raw = await rawRun(messages);
    await transport.close();

    const config = loadConfig({ MAILROOM_DATA_DIR: dir, MAILROOM_LOG_LEVEL: 'warn' });
    const store = await openStore(config.databaseUrl, { clock: systemClock });
    await applyConfig(store, {
      organizations: [{
        id: 'bench', plan: 'business_200k', credits: 1_000_000,
        services: [{ id: 'sink', provider: 'smtp', default: true, smtp: { host: '127.0.0.1', port: smtp.port } }],
      }],
    });
    // Queued the way the send path queues them (sortable ids), in one transaction.
    const enqueue = (from: number, count: number) => store.transaction(async (tx) => {
      const now = systemClock.now();
      for (let i = from; i < from + count; i++) {
        const e = email(i);
        const id = newSortableId('msg', now);
        await tx.messages.insert({
          id, org_id: 'bench', template_id: 'bench', service_id: 'sink', status: 'queued', status_token_hash: sha256(id), key_type: 'private',
          content: JSON.stringify(e), subject: e.subject, header_message_id: `<${id}@bench>`, attachments: null, credit_taken: true,
          idempotency_key: null, recipients: e.to.map((a) => ({ kind: 'to' as const, email: a.address })), created_at: now,
        });
      }
    });
    const worker = new DeliveryWorker({ store, clock: systemClock, dataDir: dir, pacer: new LocalPacer(systemClock), metrics: createMetrics(), logger: quiet }, { batchSize: 50 });
    const delivered = async (count: number): Promise<void> => {
      const before = await smtp.count();
      while ((await smtp.count()) - before < count) await new Promise((r) => setTimeout(r, 5));
    };
    // The same warm-up as the raw path got: JIT and the pool's sockets.
    const warm = Math.min(500, messages);
    await enqueue(0, warm);
    worker.start();
    await delivered(warm);
    await enqueue(warm, messages);
    const startQueue = performance.now();
    worker.nudge();
    await delivered(messages);
    const queued = messages / ((performance.now() - startQueue) / 1000);
    await worker.stop();
    await store.close();
    return { raw, queued, messages };
  } finally {
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
