import { expect } from 'vitest';
import { openBlobStore } from '../../../src/blobs/index.js';
import { LocalPacer } from '../../../src/delivery/pacing.js';
import type { TransportFactory } from '../../../src/delivery/transport.js';
import { DeliveryWorker } from '../../../src/delivery/worker.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import type { Dialect } from '../../../src/storage/dialect.js';
import { freshApp, type TestApp } from '../app.js';
import { type Closer, closerPerTest, tempDir } from '../cleanup.js';
import { CONTACT_TEMPLATE, captureLogger, PARAMS, privateHeaders } from '../delivery.js';
import type { TemplateSeed } from '../orgs.js';
import { CONTACT_TEMPLATE as SEEDED_CONTACT, seedOrg } from '../seed.js';

/**
 * A provider service through the real send path and the real worker: organization `acme` whose
 * default service is the provider under test (written to the store as the admin API stores it:
 * `settings.<provider>`), and a worker running its transport with the app's attachment store.
 * Two setups: `providerSetup` for the JSON APIs (Postmark, Resend, SendGrid: service `svc`, the
 * delivery tests' contact template with Bcc and two attachments) and `providerHarness` for the
 * raw-MIME ones (Mailgun, SES: service named for the provider, FULL_TEMPLATE, settings that can
 * be replaced, the built-in transport thread when no factory is given).
 */

export const TO = 'owner@acme.test';
export const CC = 'audit@acme.test';
export const BCC = 'archive@acme.test';
export const PDF = Buffer.from('%PDF-1.7\n\u0000\u00ff binary bytes \r\n end', 'latin1');
export const NOTES = Buffer.from('plain notes, ünïcode');

/** Two To (one with a name), Cc, Bcc, Reply-To with a name, html and text, attachments allowed. */
export const FULL_TEMPLATE: TemplateSeed = {
  ...CONTACT_TEMPLATE,
  id: 'full',
  subject: 'Order for {{name}}',
  to: 'Acme Owner <owner@acme.test>, second@acme.test',
  bcc: 'archive@acme.test',
  allow_attachments: true,
};

/** Bytes no text step would leave alone: every byte value, then a PDF-looking header. */
export const BINARY = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.from('%PDF-1.7\r\n\x00\xff')]);
export const ATTACHMENTS = [
  { filename: 'report.pdf', content: Buffer.from('%PDF-1.7 a small report\n'), content_type: 'application/pdf' },
  { filename: 'blob.bin', content: BINARY, content_type: 'application/octet-stream' },
];

/** An attachment as POST /v1/send takes it inline. */
interface Inline {
  filename: string;
  content_base64: string;
  content_type?: string;
}

interface Provider {
  /** The service's id and its settings as stored (`{ <provider>: {...} }`). */
  serviceId: string;
  settings: Record<string, unknown>;
  /** Undefined: the built-in transports, in their worker thread (compiled, from dist/). */
  factory: TransportFactory | undefined;
  templates: TemplateSeed[];
}

interface ProviderApp {
  t: TestApp;
  dataDir: string;
  worker: DeliveryWorker;
  /** POST /v1/send of `template` with these attachments; the message id. */
  post(template: string, attachments: Inline[]): Promise<string>;
  /** Replaces the service's settings (a new version: the worker builds a new transport). */
  setSettings(settings: Record<string, unknown>): Promise<void>;
}

async function providerApp(dialect: Dialect, closer: Closer, provider: string, p: Provider): Promise<ProviderApp> {
  const dataDir = tempDir(closer, 'mailroom-provider-');
  const t = await freshApp(dialect, { MAILROOM_DATA_DIR: dataDir });
  closer.defer(() => t.cleanup());
  await seedOrg(t.store, { credits: 1000, templates: p.templates });
  const setSettings = async (settings: Record<string, unknown>) => {
    await t.store.services.put(
      'acme',
      p.serviceId,
      { provider, settings, is_default: true, max_per_second: null },
      t.clock.now(),
    );
  };
  await setSettings(p.settings);
  const blobs = openBlobStore({ blobUrl: undefined, dataDir, baseUrl: t.config.baseUrl }).blobs;
  const worker = new DeliveryWorker(
    {
      store: t.store,
      clock: t.clock,
      dataDir,
      pacer: new LocalPacer(t.clock),
      metrics: createMetrics(),
      logger: captureLogger(),
      blobs,
      ...(p.factory !== undefined ? { transports: { [provider]: p.factory } } : {}),
    },
    { batchSize: 50, leaseMs: 60_000, pollMs: 20, reapEveryMs: 10_000 },
  );
  closer.defer(() => worker.stop(2_000));
  return {
    t,
    dataDir,
    worker,
    setSettings,
    async post(template, attachments) {
      const payload = { template_id: template, template_params: PARAMS, ...(attachments.length > 0 ? { attachments } : {}) };
      const res = await t.app.inject({ method: 'POST', url: '/v1/send', headers: privateHeaders, payload });
      expect(res.statusCode, res.body).toBe(202);
      return res.json<{ message_id: string }>().message_id;
    },
  };
}

export interface ProviderSetup {
  t: TestApp;
  worker: DeliveryWorker;
  /** POST /v1/send of the contact template with PDF and NOTES attached; the message id. */
  send(): Promise<string>;
}

/** A JSON-API provider (`settings` unwrapped) as service `svc`; everything closed by `closer`. */
export async function providerSetup(
  dialect: Dialect,
  closer: Closer,
  provider: string,
  settings: Record<string, unknown>,
  factory: TransportFactory,
): Promise<ProviderSetup> {
  const templates = [{ ...CONTACT_TEMPLATE, bcc: BCC, allow_attachments: true }];
  const s = await providerApp(dialect, closer, provider, {
    serviceId: 'svc',
    settings: { [provider]: settings },
    factory,
    templates,
  });
  const attachments: Inline[] = [
    { filename: 'report.pdf', content_base64: PDF.toString('base64'), content_type: 'application/pdf' },
    { filename: 'notes.txt', content_base64: NOTES.toString('base64') },
  ];
  return { t: s.t, worker: s.worker, send: () => s.post('contact', attachments) };
}

export interface MimeProviderSetup extends Omit<ProviderApp, 'post'> {
  /** POST /v1/send of FULL_TEMPLATE with ATTACHMENTS (or none); the message id. */
  send(attachments?: boolean): Promise<string>;
}

/** Raw-MIME providers (`settings` wrapped) as the service named for the provider, closed after each test. */
export function providerHarness(dialect: Dialect) {
  const closer = closerPerTest();
  return {
    closer,
    async setup(
      provider: string,
      factory: TransportFactory | undefined,
      settings: Record<string, unknown>,
    ): Promise<MimeProviderSetup> {
      const { post, ...s } = await providerApp(dialect, closer, provider, {
        serviceId: provider,
        settings,
        factory,
        templates: [SEEDED_CONTACT, FULL_TEMPLATE],
      });
      const inline = ATTACHMENTS.map((a) => ({
        filename: a.filename,
        content_base64: a.content.toString('base64'),
        content_type: a.content_type,
      }));
      return { ...s, send: (attachments = true) => post('full', attachments ? inline : []) };
    },
  };
}

/** The suppressed addresses of `acme`, sorted. */
export async function suppressed(t: TestApp): Promise<string[]> {
  return (await t.store.suppressions.list('acme')).map((s) => s.email).sort();
}
