import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { afterEach, beforeEach, expect } from 'vitest';
import type { ConfigFile } from '../../src/config/resources.js';
import type { Clock, ManualClock } from '../../src/domain/clock.js';
import { newId, sha256 } from '../../src/domain/ids.js';
import { LocalPacer, type Pacer } from '../../src/delivery/pacing.js';
import type { RetryPolicy } from '../../src/delivery/retry.js';
import type { TransportFactory } from '../../src/delivery/transport.js';
import { DeliveryWorker, type WorkerLogger, type WorkerOptions } from '../../src/delivery/worker.js';
import { createMetrics, type Metrics } from '../../src/observability/metrics.js';
import type { Dialect } from '../../src/storage/dialect.js';
import type { Store } from '../../src/storage/store.js';
import type { RenderedEmail } from '../../src/templates/render.js';
import { freshApp, type TestApp } from '../support/app.js';
import { CONTACT_TEMPLATE as SEEDED_CONTACT, PRIVATE_KEY, seedOrg } from '../support/seed.js';

// ---------------------------------------------------------------------------------------------
// Cleanup: everything a test opens is closed in afterEach, newest first.

export class Closer {
  private readonly fns: Array<() => Promise<unknown> | unknown> = [];
  defer(fn: () => Promise<unknown> | unknown): void {
    this.fns.push(fn);
  }
  async closeAll(): Promise<void> {
    while (this.fns.length > 0) {
      const fn = this.fns.pop();
      try {
        await fn?.();
      } catch (err) {
        console.warn('cleanup failed:', err);
      }
    }
  }
}

export function tempDir(closer: Closer, prefix = 'mailroom-delivery-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  closer.defer(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// ---------------------------------------------------------------------------------------------
// The SMTP sink: a real smtp-server on loopback that answers 4xx/5xx on demand.

/** An SMTP reply error as smtp-server sends it: `<code> <message>`. */
export function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

export interface Received {
  raw: Buffer;
  messageId: string | undefined;
  mailFrom: string;
  rcptTo: string[];
  user: string | undefined;
  /** The sink's clock when the message was received (ManualClock time in most tests). */
  at: number;
}

export interface SinkBehaviour {
  /** Called for every MAIL FROM; `n` counts them (1 = first). Return an error to refuse. */
  mailFrom?: (address: string, n: number) => Error | undefined;
  /** Called for every RCPT TO; `n` counts RCPT commands for this address (1 = first). Return an error to refuse. */
  rcpt?: (address: string, n: number) => Error | undefined;
  /** Called after the whole DATA arrived; `n` counts DATA commands (1 = first). Return an error to refuse. */
  data?: (raw: Buffer, n: number) => Error | undefined;
  /** Delay before the DATA reply (a slow relay). */
  dataDelayMs?: number;
}

export interface SinkOptions extends SinkBehaviour {
  /** Listen on this port (default: any free one). */
  port?: number;
  /** Require AUTH: only these credentials pass. */
  auth?: { user: string; pass: string };
  clock?: Clock;
  /** Offer STARTTLS, with smtp-server's built-in certificate (self-signed, and expired). */
  starttls?: boolean;
}

export interface Sink {
  port: number;
  /** Messages the sink accepted (250 to DATA), in order. */
  received: Received[];
  /** Every DATA payload, accepted or refused. */
  dataAttempts: Buffer[];
  /** Every RCPT TO address, accepted or refused. */
  rcptAttempts: string[];
  authAttempts: Array<{ user: string; ok: boolean }>;
  /** TCP connections the sink has seen. */
  connections: number;
  behaviour: SinkBehaviour;
  parse(i: number): Promise<ParsedMail>;
  close(): Promise<void>;
}

export function messageIdOf(raw: Buffer | string): string | undefined {
  return /^Message-ID:[ \t]*(<[^>\r\n]+>)/im.exec(raw.toString('utf8'))?.[1];
}

export async function startSink(options: SinkOptions = {}, closer?: Closer): Promise<Sink> {
  const clock = options.clock ?? { now: () => Date.now() };
  const rcptCounts = new Map<string, number>();
  let dataCount = 0;
  let mailFromCount = 0;
  const sink: Sink = {
    port: 0,
    received: [],
    dataAttempts: [],
    rcptAttempts: [],
    authAttempts: [],
    connections: 0,
    behaviour: {
      ...(options.mailFrom ? { mailFrom: options.mailFrom } : {}),
      ...(options.rcpt ? { rcpt: options.rcpt } : {}),
      ...(options.data ? { data: options.data } : {}),
      ...(options.dataDelayMs !== undefined ? { dataDelayMs: options.dataDelayMs } : {}),
    },
    parse: async (i) => {
      const r = sink.received[i];
      if (r === undefined) throw new Error(`the sink received no message #${i} (got ${sink.received.length})`);
      return simpleParser(r.raw);
    },
    close: async () => undefined,
  };
  const serverOptions: SMTPServerOptions = {
    logger: false,
    ...(options.starttls === true ? {} : { disabledCommands: ['STARTTLS'] }),
    disableReverseLookup: true,
    closeTimeout: 200,
    authOptional: options.auth === undefined,
    ...(options.auth !== undefined ? { allowInsecureAuth: true } : {}),
    onConnect(_session, callback) {
      sink.connections += 1;
      callback();
    },
    onAuth(auth, _session, callback) {
      const wanted = options.auth;
      const ok = wanted !== undefined && auth.username === wanted.user && auth.password === wanted.pass;
      sink.authAttempts.push({ user: auth.username ?? '', ok });
      if (ok) callback(null, { user: auth.username });
      else callback(smtpError(535, '5.7.8 Authentication credentials invalid'));
    },
    onMailFrom(address, _session, callback) {
      mailFromCount += 1;
      callback(sink.behaviour.mailFrom?.(address.address, mailFromCount) ?? null);
    },
    onRcptTo(address, _session, callback) {
      const n = (rcptCounts.get(address.address) ?? 0) + 1;
      rcptCounts.set(address.address, n);
      sink.rcptAttempts.push(address.address);
      callback(sink.behaviour.rcpt?.(address.address, n) ?? null);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        dataCount += 1;
        sink.dataAttempts.push(raw);
        const refusal = sink.behaviour.data?.(raw, dataCount);
        if (refusal === undefined) {
          sink.received.push({
            raw,
            messageId: messageIdOf(raw),
            mailFrom: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
            rcptTo: session.envelope.rcptTo.map((a) => a.address),
            user: typeof session.user === 'string' ? session.user : undefined,
            at: clock.now(),
          });
        }
        const delay = sink.behaviour.dataDelayMs ?? 0;
        if (delay > 0) setTimeout(() => callback(refusal ?? null), delay);
        else callback(refusal ?? null);
      });
    },
  };
  const server = new SMTPServer(serverOptions);
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  sink.port = (server.server.address() as net.AddressInfo).port;
  let closed = false;
  sink.close = () => {
    if (closed) return Promise.resolve();
    closed = true;
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  closer?.defer(() => sink.close());
  return sink;
}

/** A port nothing listens on (for "connection refused"). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it is true; fails after `timeoutMs`. For real-time peers only, never for retry times. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// ---------------------------------------------------------------------------------------------
// Organization, sends and reads.

export const PARAMS = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello from the engine' } as const;

type OrgInput = ConfigFile['organizations'][number];
type ServiceInput = NonNullable<OrgInput['services']>[number];
type TemplateInput = NonNullable<OrgInput['templates']>[number];

/** The template the delivery tests send: names, Cc and Reply-To so every header can be checked. */
export const CONTACT_TEMPLATE: TemplateInput = {
  ...SEEDED_CONTACT,
  to: 'Acme Owner <owner@acme.test>',
  cc: 'audit@acme.test',
  from_name: 'Acme Support',
  reply_to: '{{name}} <{{email}}>',
};

export function smtpService(port: number, extra: Partial<ServiceInput> & { user?: string; pass?: string } = {}): ServiceInput {
  const { user, pass, ...rest } = extra;
  return {
    id: 'smtp',
    provider: 'smtp',
    default: true,
    smtp: { host: '127.0.0.1', port, secure: false, ...(user !== undefined ? { user } : {}), ...(pass !== undefined ? { pass } : {}) },
    ...rest,
  };
}

/** Organization `acme` whose default service is the SMTP sink at `port`. */
export async function seedSmtpOrg(store: Store, service: ServiceInput, overrides: Partial<OrgInput> = {}): Promise<OrgInput> {
  return seedOrg(store, { credits: 5000, services: [service], templates: [CONTACT_TEMPLATE], ...overrides });
}

export const privateHeaders = { authorization: `Bearer ${PRIVATE_KEY}` };

/** POST /v1/send through the real send path; returns the message id. */
export async function send(t: TestApp, params: Record<string, unknown> = PARAMS): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/send', headers: privateHeaders, payload: { template_id: 'contact', template_params: params } });
  expect(res.statusCode, res.body).toBe(202);
  return (res.json() as { message_id: string }).message_id;
}

export interface MessageView {
  message_id: string;
  status: string;
  sent_at: string | null;
  events: Array<{ type: string; at: string; details?: Record<string, unknown> }>;
}

/** GET /v1/messages/{id} with the private key. */
export async function view(t: TestApp, id: string): Promise<MessageView> {
  const res = await t.app.inject({ method: 'GET', url: `/v1/messages/${id}`, headers: privateHeaders });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as MessageView;
}

export async function row(store: Store, id: string, org = 'acme') {
  const m = await store.messages.get(org, id);
  if (m === undefined) throw new Error(`message ${id} not found`);
  return m;
}

export async function eventTypes(store: Store, id: string): Promise<string[]> {
  return (await store.messages.events(id)).map((e) => e.type);
}

export async function statusCounts(store: Store): Promise<Record<string, number>> {
  const rows = await store.db.selectFrom('messages').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('status').execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

export function addresses(a: AddressObject | AddressObject[] | undefined): Array<{ name: string; address: string | undefined }> {
  if (a === undefined) return [];
  return (Array.isArray(a) ? a : [a]).flatMap((o) => o.value.map((v) => ({ name: v.name, address: v.address })));
}

/** A stored rendered email, for inserting messages without the HTTP path. */
export function renderedEmail(i: number): RenderedEmail {
  return {
    subject: `Bulk message ${i}`,
    from: { name: 'Acme', address: 'noreply@acme.test' },
    reply_to: [],
    to: [{ name: '', address: `rcpt${i}@example.com` }],
    cc: [],
    bcc: [],
    html: `<p>Message ${i}</p>`,
    text: `Message ${i}`,
  };
}

/** Inserts `n` queued messages of `acme`/`smtp` directly (as the send path's transaction does). */
export async function insertQueued(store: Store, n: number, createdAt: number, serviceId = 'smtp'): Promise<string[]> {
  const ids: string[] = [];
  const chunk = 100;
  const jobs: Array<Promise<void>> = [];
  for (let start = 0; start < n; start += chunk) {
    const rows = Array.from({ length: Math.min(chunk, n - start) }, (_, k) => {
      const i = start + k;
      const e = renderedEmail(i);
      const id = newId('msg');
      ids.push(id);
      return {
        id, org_id: 'acme', template_id: 'contact', service_id: serviceId, status: 'queued' as const, status_token_hash: sha256(id),
        key_type: 'private' as const, content: JSON.stringify(e), subject: e.subject, header_message_id: `<${id}@mailroom.test>`,
        attachments: null, credit_taken: true, idempotency_key: null,
        recipients: e.to.map((a) => ({ kind: 'to' as const, email: a.address })), created_at: createdAt,
      };
    });
    jobs.push(store.transaction(async (tx) => {
      for (const r of rows) await tx.messages.insert(r);
    }));
  }
  await Promise.all(jobs);
  return ids;
}

// ---------------------------------------------------------------------------------------------
// Workers.

export interface LogEntry { level: 'info' | 'warn' | 'error'; obj: Record<string, unknown>; msg: string }

export function captureLogger(): WorkerLogger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const log = (level: LogEntry['level']) => (obj: object, msg: string) => {
    entries.push({ level, obj: obj as Record<string, unknown>, msg });
  };
  return { entries, info: log('info'), warn: log('warn'), error: log('error') };
}

export interface WorkerSetup {
  store: Store;
  clock: ManualClock;
  dataDir: string;
  pacer?: Pacer;
  metrics?: Metrics;
  retry?: RetryPolicy;
  random?: () => number;
  transports?: Readonly<Record<string, TransportFactory>>;
  options?: Partial<WorkerOptions>;
}

export function newWorker(s: WorkerSetup, closer: Closer) {
  const logger = captureLogger();
  const metrics = s.metrics ?? createMetrics();
  const worker = new DeliveryWorker({
    store: s.store,
    clock: s.clock,
    dataDir: s.dataDir,
    pacer: s.pacer ?? new LocalPacer(s.clock),
    metrics,
    logger,
    ...(s.retry !== undefined ? { retry: s.retry } : {}),
    ...(s.random !== undefined ? { random: s.random } : {}),
    ...(s.transports !== undefined ? { transports: s.transports } : {}),
  }, { batchSize: 50, leaseMs: 60_000, pollMs: 20, reapEveryMs: 10_000, ...s.options });
  closer.defer(() => worker.stop(2_000));
  return { worker, logger, metrics };
}

// ---------------------------------------------------------------------------------------------
// Per-test harness: a fresh app (real send path) on the dialect, sinks and workers, all closed
// after each test (workers first, then sinks, then the app and its database).

export function deliveryHarness(dialect: Dialect) {
  let closer = new Closer();
  beforeEach(() => {
    closer = new Closer();
  });
  afterEach(async () => {
    await closer.closeAll();
  });
  return {
    get closer(): Closer {
      return closer;
    },
    async app(): Promise<TestApp> {
      const t = await freshApp(dialect);
      closer.defer(() => t.cleanup());
      return t;
    },
    sink(t: TestApp, options: SinkOptions = {}): Promise<Sink> {
      return startSink({ clock: t.clock, ...options }, closer);
    },
    worker(t: TestApp, extra: Partial<WorkerSetup> = {}) {
      return newWorker({ store: t.store, clock: t.clock, dataDir: tempDir(closer), ...extra }, closer);
    },
  };
}

/** The balance as stored now (not through the store's short-lived catalog cache). */
export async function creditsOf(t: TestApp, org = 'acme'): Promise<number> {
  const r = await t.store.db.selectFrom('organizations').select('credits').where('id', '=', org).executeTakeFirstOrThrow();
  return Number(r.credits);
}
