import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { CompiledQuery } from 'kysely';
import { applyConfig } from '../src/admin/apply.js';
import { buildApp } from '../src/app.js';
import { buildServices } from '../src/cli/runtime.js';
import { loadConfig } from '../src/config/env.js';
import { systemClock } from '../src/domain/clock.js';
import { openDatabase } from '../src/storage/dialect.js';
import { GroupCommit } from '../src/storage/group-commit.js';
import { openStore } from '../src/storage/store.js';
import { deliveryBench } from './delivery.js';
import { providerBench } from './provider.js';
import { httpLoad, type LoadFigures } from './http-load.js';
import { MemoryLimiterStore, type Counter } from '../src/protection/store.js';

class CountingOnly extends MemoryLimiterStore {
  override consume(counters: readonly Counter[]): Promise<number> {
    return super.consume(counters.map((c) => ({ ...c, limit: null })));
  }
}

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const PRIVATE_KEY = 'sk_bench_private_key_000000000000';

const BODY = JSON.stringify({
  template_id: 'bench',
  template_params: { name: 'Ada Lovelace', email: 'ada@example.com', company: 'Analytical Engines', plan: 'pro', message: 'The engine is ready. '.repeat(8) },
});

function row(name: string, f: LoadFigures): string {
  return `${name.padEnd(28)} ${f.rps.toFixed(0).padStart(8)} req/s   p50 ${String(f.p50).padStart(3)} ms   p99 ${String(f.p99).padStart(4)} ms   non-2xx ${f.non2xx}  errors ${f.errors}`;
}

async function bare(): Promise<LoadFigures> {
  const app = Fastify();
  app.post('/v1/send', async (_req, reply) => reply.code(202).send({ message_id: 'msg_x', status: 'queued', status_token: 'st_x' }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  await httpLoad({ url: `${url}/v1/send`, body: BODY, headers: { 'content-type': 'application/json' }, seconds: 2, connections: CONNECTIONS });
  const figures = await httpLoad({ url: `${url}/v1/send`, body: BODY, headers: { 'content-type': 'application/json' }, seconds: SECONDS, connections: CONNECTIONS });
  await app.close();
  return figures;
}

/**
 * Context for the send figure, not the goal's baseline: the bare route plus the least a durable
 * API must do, one row holding the body in SQLite, through the same group commit and WAL flush
 * as a send, before the 202.
 */
async function bareDurable(): Promise<LoadFigures> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-bench-bare-'));
  const { db, file } = await openDatabase(`sqlite:${path.join(dir, 'bare.db')}`);
  await db.executeQuery(CompiledQuery.raw('create table bodies (id integer primary key, body text not null)'));
  const group = new GroupCommit(db, file);
  const app = Fastify();
  app.post('/v1/send', async (req, reply) => {
    const body = JSON.stringify(req.body);
    await group.run((conn) => conn.executeQuery(CompiledQuery.raw('insert into bodies (body) values (?)', [body])));
    return reply.code(202).send({ message_id: 'msg_x', status: 'queued', status_token: 'st_x' });
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const headers = { 'content-type': 'application/json' };
  await httpLoad({ url: `${url}/v1/send`, body: BODY, headers, seconds: 2, connections: CONNECTIONS });
  const figures = await httpLoad({ url: `${url}/v1/send`, body: BODY, headers, seconds: SECONDS, connections: CONNECTIONS });
  await app.close();
  await file?.close();
  await db.destroy();
  fs.rmSync(dir, { recursive: true, force: true });
  return figures;
}

async function mailroomSend(): Promise<LoadFigures> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-bench-'));
  const config = loadConfig({ MAILROOM_DATA_DIR: dir, MAILROOM_LOG_LEVEL: 'warn' });
  const store = await openStore(config.databaseUrl, { clock: systemClock });
  await applyConfig(store, {
    organizations: [{
      id: 'bench', plan: 'business_200k', credits: 100_000_000,
      keys: [{ type: 'private', key: PRIVATE_KEY }],
      services: [{ id: 'outbox', provider: 'outbox', default: true }],
      templates: [{
        id: 'bench', subject: 'Hello {{name}} from {{company}}', to: '{{email}}', from_email: 'bench@mailroom.test',
        html: '<p>Dear {{name}},</p><p>{{message}}</p><p>Plan: {{plan}}</p>', text: '{{message}}',
        allow_dynamic_recipients: true, strict_params: true,
        params: [
          { name: 'name', type: 'string', required: true, max_length: 100 },
          { name: 'email', type: 'email', required: true },
          { name: 'company', type: 'string' },
          { name: 'plan', type: 'string', enum: ['free', 'pro'] },
          { name: 'message', type: 'string', required: true },
        ],
      }],
    }],
  });
  // The benchmark sends far above any plan's per-second limit on purpose: the limiter still
  // counts every request (its cost is measured), but with no limit on the counters.
  const services = buildServices(config, { store, clock: systemClock, protection: { store: new CountingOnly(systemClock) } });
  const { clock, metrics, protection, blobs } = services;
  const app = await buildApp({ config, store, clock, metrics, protection, blobs });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${PRIVATE_KEY}` };
  await httpLoad({ url: `${url}/v1/send`, body: BODY, headers, seconds: 2, connections: CONNECTIONS, uniqueIdempotencyKey: true });
  const figures = await httpLoad({ url: `${url}/v1/send`, body: BODY, headers, seconds: SECONDS, connections: CONNECTIONS, uniqueIdempotencyKey: true });
  await app.close();
  await services.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return figures;
}

async function main(): Promise<void> {
  console.log(`mailroom bench: ${SECONDS}s per target, ${CONNECTIONS} connections, Node ${process.version}, ${os.cpus().length} cores`);
  const only = process.env.BENCH_ONLY;
  if (only === undefined || only === 'send') {
    const base = await bare();
    console.log(row('bare Fastify route (202)', base));
    const durable = await bareDurable();
    console.log(row('bare + one durable insert', durable));
    const send = await mailroomSend();
    console.log(row('POST /v1/send (SQLite)', send));
    console.log(`ratio send/bare: throughput ${(send.rps / base.rps).toFixed(2)}x   p50 ${(send.p50 / Math.max(base.p50, 1)).toFixed(2)}x   p99 ${(send.p99 / Math.max(base.p99, 1)).toFixed(2)}x`);
    console.log(`  for context, send/(bare + one durable insert): throughput ${(send.rps / durable.rps).toFixed(2)}x`);
  }
  if (only === undefined || only === 'delivery') {
    const d = await deliveryBench(Number(process.env.BENCH_MESSAGES ?? 3000), Number(process.env.BENCH_ROUNDS ?? 5));
    console.log(`delivery, ${d.messages} messages to a loopback SMTP sink, ${d.ratios.length} alternating rounds (medians):`);
    console.log(`  raw nodemailer pool (50 in flight)  ${d.raw.toFixed(0).padStart(6)} msg/s   ${d.rawCpuMicros.toFixed(0).padStart(4)} µs CPU/msg`);
    console.log(`  queue → worker → sink (SQLite)      ${d.queued.toFixed(0).padStart(6)} msg/s   ${d.queueCpuMicros.toFixed(0).padStart(4)} µs CPU/msg`);
    console.log(`ratio queue/raw: ${d.ratio.toFixed(2)}x   (rounds: ${d.ratios.map((r) => r.toFixed(2)).join(', ')})`);
  }
  if (only === undefined || only === 'provider') {
    // 2000 messages a run (the SMTP line's 3000 would add ~45 s): its rounds still take ~2 s each.
    const p = await providerBench(Number(process.env.BENCH_PROVIDER_MESSAGES ?? process.env.BENCH_MESSAGES ?? 2000), Number(process.env.BENCH_ROUNDS ?? 5));
    console.log(`delivery, ${p.messages} messages to a loopback Postmark fake, ${p.ratios.length} alternating rounds (medians):`);
    console.log(`  raw fetch (50 in flight)            ${p.raw.toFixed(0).padStart(6)} msg/s   ${p.rawCpuMicros.toFixed(0).padStart(4)} µs CPU/msg   ${p.rawBodyBytes.toFixed(0)} B/request`);
    console.log(`  queue → worker → Postmark (SQLite)  ${p.queued.toFixed(0).padStart(6)} msg/s   ${p.queueCpuMicros.toFixed(0).padStart(4)} µs CPU/msg   ${p.queueBodyBytes.toFixed(0)} B/request`);
    console.log(`ratio queue/raw fetch: ${p.ratio.toFixed(2)}x   (rounds: ${p.ratios.map((r) => r.toFixed(2)).join(', ')})`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
