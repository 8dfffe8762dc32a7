import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { alternateRounds, askChild, median } from './rounds.js';
import { applyConfig } from '../src/admin/apply.js';
import { loadConfig } from '../src/config/env.js';
import { systemClock } from '../src/domain/clock.js';
import { newSortableId, sha256 } from '../src/domain/ids.js';
import { LocalPacer } from '../src/delivery/pacing.js';
import { DeliveryWorker } from '../src/delivery/worker.js';
import { createMetrics } from '../src/observability/metrics.js';
import { openStore } from '../src/storage/store.js';
import type { RenderedEmail } from '../src/templates/render.js';

/**
 * The delivery benchmark's line for an HTTP provider (issue 14): the queue → worker → transport
 * path through Postmark's transport (in its thread, as `mailroom serve` runs it) against Node's
 * global `fetch` posting the same JSON to the same loopback fake, with the same number of sends
 * in flight. The fake is this file again, forked with FAKE_ENV set: a bare node:http server in
 * its own process (so its CPU is not charged to the sender, as with a real API) that reads each
 * body and answers Postmark's success JSON at once.
 */

const FAKE_ENV = 'MAILROOM_BENCH_POSTMARK_FAKE';
const TOKEN = 'pm-bench-server-token';
/** Sends in flight on either path: the worker's batch size, and fetch's concurrent loops. */
const IN_FLIGHT = 50;

export interface ProviderFigures {
  raw: number;
  queued: number;
  ratio: number;
  /** Each round's queue/raw ratio. */
  ratios: number[];
  /** Median CPU µs this process (every thread) spent per message on each path. */
  rawCpuMicros: number;
  queueCpuMicros: number;
  /** Mean request body the fake received per message on each path, in bytes. */
  rawBodyBytes: number;
  queueBodyBytes: number;
  messages: number;
}

interface FakeCounts {
  count: number;
  bytes: number;
}

/** The fake's side: count requests and body bytes, answer 200 with Postmark's success body. */
function serveFake(): void {
  let count = 0;
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      count += 1;
      const body = JSON.stringify({
        To: 'rcpt@example.com',
        SubmittedAt: new Date().toISOString(),
        MessageID: randomUUID(),
        ErrorCode: 0,
        Message: 'OK',
      });
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  // Both clients keep their sockets across the pauses between runs.
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.send?.({ port });
  });
  process.on('message', (msg: unknown) => {
    if (msg === 'count') process.send?.({ count, bytes });
    if (msg === 'stop') {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    }
  });
}

if (process.env[FAKE_ENV] === '1') serveFake();

async function fake(): Promise<{ port: number; counts: () => Promise<FakeCounts>; close: () => Promise<void> }> {
  const child = fork(fileURLToPath(import.meta.url), [], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, [FAKE_ENV]: '1' },
  });
  const ask = askChild(child);
  const port = await ask('', (m) => m.port);
  return {
    port,
    counts: () =>
      ask('count', (m) => (m.count !== undefined && m.bytes !== undefined ? { count: m.count, bytes: m.bytes } : undefined)),
    close: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send('stop');
      }),
  };
}

/** The SMTP line's email (delivery.ts), so both lines send the same content. */
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

/**
 * What an application calling Postmark itself would post: the fields (and so the size) of the
 * transport's body for the same email, our id in the Message-ID header and the metadata.
 */
function postmarkJson(i: number, id: string): string {
  const e = email(i);
  return JSON.stringify({
    From: `"${e.from.name}" <${e.from.address}>`,
    To: e.to.map((a) => a.address).join(', '),
    Subject: e.subject,
    HtmlBody: e.html,
    TextBody: e.text,
    Headers: [{ Name: 'Message-ID', Value: `<${id}@bench>` }],
    Attachments: [],
    Metadata: { mailroom_message_id: id },
    MessageStream: 'outbound',
  });
}

/**
 * Messages per second to a loopback Postmark fake in another process, measured as the SMTP line
 * is (delivery.ts): raw `fetch` and the queue path alternate for `rounds` rounds after a warm-up,
 * figures are medians, the ratio the median of each round's ratio, CPU counts every thread of
 * this process per message.
 */
export async function providerBench(messages: number, rounds = 5): Promise<ProviderFigures> {
  const api = await fake();
  const endpoint = `http://127.0.0.1:${api.port}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-bench-provider-'));
  try {
    const rawCpu: number[] = [];
    const queueCpu: number[] = [];
    const rawBytes: number[] = [];
    const queueBytes: number[] = [];
    const cpuMicros = (since: NodeJS.CpuUsage) => {
      const d = process.cpuUsage(since);
      return d.user + d.system;
    };

    const headers = { accept: 'application/json', 'content-type': 'application/json', 'x-postmark-server-token': TOKEN };
    // One sequence for both paths, so their bodies carry numbers of the same length.
    let sequence = 0;
    const rawRun = async (count: number): Promise<number> => {
      let next = 0;
      const before = await api.counts();
      const started = performance.now();
      const cpu = process.cpuUsage();
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < count) {
            next += 1;
            const i = sequence++;
            const res = await fetch(`${endpoint}/email`, {
              method: 'POST',
              headers,
              body: postmarkJson(i, newSortableId('msg', Date.now())),
            });
            const json = (await res.json()) as { MessageID?: unknown };
            if (res.status !== 200 || typeof json.MessageID !== 'string') throw new Error(`fake answered ${res.status}`);
          }
        }),
      );
      rawCpu.push(cpuMicros(cpu) / count);
      const rate = count / ((performance.now() - started) / 1000);
      const after = await api.counts();
      rawBytes.push((after.bytes - before.bytes) / count);
      return rate;
    };

    const config = loadConfig({ MAILROOM_DATA_DIR: dir, MAILROOM_LOG_LEVEL: 'warn' });
    const store = await openStore(config.databaseUrl, { clock: systemClock });
    await applyConfig(store, {
      organizations: [
        {
          id: 'bench',
          plan: 'business_200k',
          credits: 1_000_000,
          services: [{ id: 'pm', provider: 'postmark', default: true, postmark: { server_token: TOKEN, endpoint } }],
        },
      ],
    });
    const enqueue = (count: number, onEnd: () => void) =>
      store.transaction(async (tx) => {
        const now = systemClock.now();
        for (let n = 0; n < count; n++) {
          const e = email(sequence++);
          const id = newSortableId('msg', now);
          await tx.messages.insert({
            id,
            org_id: 'bench',
            template_id: 'bench',
            service_id: 'pm',
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
    const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
    // No `transports`: the built-in ones in their thread, as `mailroom serve` runs them.
    const worker = new DeliveryWorker(
      { store, clock: systemClock, dataDir: dir, pacer: new LocalPacer(systemClock), metrics: createMetrics(), logger: quiet },
      { batchSize: IN_FLIGHT },
    );
    const queueRun = async (count: number): Promise<number> => {
      // As delivery.ts: the clock starts before the commit, the run ends when the fake has them all.
      const before = await api.counts();
      let started = 0;
      let cpu = process.cpuUsage();
      await enqueue(count, () => {
        started = performance.now();
        cpu = process.cpuUsage();
      });
      worker.nudge();
      let now = before;
      while (now.count - before.count < count) {
        await new Promise((r) => setTimeout(r, 5));
        now = await api.counts();
      }
      queueCpu.push(cpuMicros(cpu) / count);
      queueBytes.push((now.bytes - before.bytes) / count);
      return count / ((performance.now() - started) / 1000);
    };

    worker.start();
    const figures = await alternateRounds(rawRun, queueRun, messages, rounds, () => {
      rawCpu.length = 0;
      queueCpu.length = 0;
    });
    await worker.stop();
    await store.close();
    return {
      ...figures,
      rawCpuMicros: median(rawCpu),
      queueCpuMicros: median(queueCpu),
      rawBodyBytes: median(rawBytes),
      queueBodyBytes: median(queueBytes),
      messages,
    };
  } finally {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
