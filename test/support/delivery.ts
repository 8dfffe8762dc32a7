import { expect } from 'vitest';
import { newId, sha256 } from '../../src/domain/ids.js';
import { LocalPacer, type Pacer } from '../../src/delivery/pacing.js';
import type { RetryPolicy } from '../../src/delivery/retry.js';
import type { TransportFactory } from '../../src/delivery/transport.js';
import { DeliveryWorker, type WorkerDeps, type WorkerLogger, type WorkerOptions } from '../../src/delivery/worker.js';
import type { BlobStore } from '../../src/blobs/blob-store.js';
import type { EventNotifier } from '../../src/events/types.js';
import type { ManualClock } from '../../src/domain/clock.js';
import { createMetrics, type Metrics } from '../../src/observability/metrics.js';
import type { Dialect } from '../../src/storage/dialect.js';
import type { Store } from '../../src/storage/store.js';
import type { RenderedEmail } from '../../src/templates/render.js';
import { freshApp, type TestApp } from './app.js';
import { bearer } from './http.js';
import { type Closer, closerPerTest, tempDir } from './cleanup.js';
import type { OrgInput } from './orgs.js';
import { CONTACT_TEMPLATE as SEEDED_CONTACT, PRIVATE_KEY, seedOrg } from './seed.js';
import { startSink, type Sink, type SinkOptions } from './smtp-sink.js';

/**
 * The delivery tests' harness: an organization whose default service is the SMTP sink
 * (../support/smtp-sink.ts), sends through the real send path, messages inserted directly,
 * workers with a captured log, and a per-test app, sinks and workers all closed after each test.
 */

export const PARAMS = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello from the engine' } as const;

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
    smtp: {
      host: '127.0.0.1',
      port,
      secure: false,
      ...(user !== undefined ? { user } : {}),
      ...(pass !== undefined ? { pass } : {}),
    },
    ...rest,
  };
}

/** Organization `acme` whose default service is the SMTP sink at `port`. */
export async function seedSmtpOrg(store: Store, service: ServiceInput, overrides: Partial<OrgInput> = {}): Promise<OrgInput> {
  return seedOrg(store, { credits: 5000, services: [service], templates: [CONTACT_TEMPLATE], ...overrides });
}

export const privateHeaders = bearer(PRIVATE_KEY);

/** POST /v1/send through the real send path; returns the message id. */
export async function send(t: TestApp, params: Record<string, unknown> = PARAMS): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/send',
    headers: privateHeaders,
    payload: { template_id: 'contact', template_params: params },
  });
  expect(res.statusCode, res.body).toBe(202);
  return (res.json() as { message_id: string }).message_id;
}

/** A recipient as GET /v1/messages/{id} shows it. */
export interface RecipientView {
  address: string;
  kind: string;
  state: string;
  reason?: string;
}

export interface MessageView {
  message_id: string;
  status: string;
  sent_at: string | null;
  events: Array<{ type: string; at: string; details?: Record<string, unknown> }>;
  recipients?: RecipientView[];
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
        id,
        org_id: 'acme',
        template_id: 'contact',
        service_id: serviceId,
        status: 'queued' as const,
        status_token_hash: sha256(id),
        key_type: 'private' as const,
        content: JSON.stringify(e),
        subject: e.subject,
        header_message_id: `<${id}@mailroom.test>`,
        attachments: null,
        credit_taken: true,
        idempotency_key: null,
        recipients: e.to.map((a) => ({ kind: 'to' as const, email: a.address })),
        created_at: createdAt,
      };
    });
    jobs.push(
      store.transaction(async (tx) => {
        for (const r of rows) await tx.messages.insert(r);
      }),
    );
  }
  await Promise.all(jobs);
  return ids;
}

// ---------------------------------------------------------------------------------------------
// Workers.

export interface LogEntry {
  level: 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string;
}

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
  /** Test mode (issue 27): the sandbox's blob store, delay, retention and composer. */
  blobs?: BlobStore;
  retentionDays?: number;
  testMode?: WorkerDeps['testMode'];
  notifier?: EventNotifier;
}

export function newWorker(s: WorkerSetup, closer: Closer) {
  const logger = captureLogger();
  const metrics = s.metrics ?? createMetrics();
  const worker = new DeliveryWorker(
    {
      store: s.store,
      clock: s.clock,
      dataDir: s.dataDir,
      pacer: s.pacer ?? new LocalPacer(s.clock),
      metrics,
      logger,
      ...(s.retry !== undefined ? { retry: s.retry } : {}),
      ...(s.random !== undefined ? { random: s.random } : {}),
      ...(s.transports !== undefined ? { transports: s.transports } : {}),
      ...(s.blobs !== undefined ? { blobs: s.blobs } : {}),
      ...(s.retentionDays !== undefined ? { retentionDays: s.retentionDays } : {}),
      ...(s.testMode !== undefined ? { testMode: s.testMode } : {}),
      ...(s.notifier !== undefined ? { notifier: s.notifier } : {}),
    },
    { batchSize: 50, leaseMs: 60_000, pollMs: 20, reapEveryMs: 10_000, ...s.options },
  );
  closer.defer(() => worker.stop(2_000));
  return { worker, logger, metrics };
}

// ---------------------------------------------------------------------------------------------
// Per-test harness: a fresh app (real send path) on the dialect, sinks and workers, all closed
// after each test (workers first, then sinks, then the app and its database).

export function deliveryHarness(dialect: Dialect) {
  const closer = closerPerTest();
  const app = async (): Promise<TestApp> => {
    const t = await freshApp(dialect);
    closer.defer(() => t.cleanup());
    return t;
  };
  return {
    closer,
    app,
    sink(t: TestApp, options: SinkOptions = {}): Promise<Sink> {
      return startSink({ clock: t.clock, ...options }, closer);
    },
    /** An app whose organization `acme` sends through a fresh sink (seedSmtpOrg, service `smtp`). */
    async smtpApp(options: SinkOptions = {}): Promise<{ t: TestApp; sink: Sink }> {
      const t = await app();
      const sink = await startSink({ clock: t.clock, ...options }, closer);
      await seedSmtpOrg(t.store, smtpService(sink.port));
      return { t, sink };
    },
    worker(t: TestApp, extra: Partial<WorkerSetup> = {}) {
      return newWorker({ store: t.store, clock: t.clock, dataDir: tempDir(closer), ...extra }, closer);
    },
  };
}
