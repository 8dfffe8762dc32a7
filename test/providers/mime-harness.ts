import { afterEach, beforeEach, expect } from 'vitest';
import { openBlobStore } from '../../src/blobs/index.js';
import { LocalPacer } from '../../src/delivery/pacing.js';
import type { TransportFactory } from '../../src/delivery/transport.js';
import { DeliveryWorker } from '../../src/delivery/worker.js';
import type { Dialect } from '../../src/storage/dialect.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { freshApp, type TestApp } from '../support/app.js';
import { Closer, tempDir } from '../support/cleanup.js';
import { bearer } from '../support/http.js';
import { CONTACT_TEMPLATE, PRIVATE_KEY, seedOrg } from '../support/seed.js';

/**
 * The raw-MIME provider tests' harness (Mailgun, SES): the real app on a dialect, organization
 * `acme` whose default service is the provider under test (written to the store as the admin API
 * stores it: `settings.<provider>`), a template with every header we send, and a worker running
 * the transport on the event loop, with the app's attachment store. Everything is closed after
 * each test.
 */

export const privateHeaders = bearer(PRIVATE_KEY);

/** Two To (one with a name), Cc, Bcc, Reply-To with a name, html and text, attachments allowed. */
export const FULL_TEMPLATE = {
  ...CONTACT_TEMPLATE,
  id: 'full',
  subject: 'Order for {{name}}',
  to: 'Acme Owner <owner@acme.test>, second@acme.test',
  cc: 'audit@acme.test',
  bcc: 'archive@acme.test',
  from_name: 'Acme Support',
  reply_to: '{{name}} <{{email}}>',
  html: '<p>{{message}}</p>',
  text: '{{message}}',
  allow_attachments: true,
};

export const PARAMS = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello through the API' };

/** Bytes no text step would leave alone: every byte value, then a PDF-looking header. */
export const BINARY = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.from('%PDF-1.7\r\n\x00\xff')]);
export const ATTACHMENTS = [
  { filename: 'report.pdf', content: Buffer.from('%PDF-1.7 a small report\n'), content_type: 'application/pdf' },
  { filename: 'blob.bin', content: BINARY, content_type: 'application/octet-stream' },
];

export interface ProviderSetup {
  t: TestApp;
  dataDir: string;
  worker: DeliveryWorker;
  /** POST /v1/send of FULL_TEMPLATE with ATTACHMENTS (or none); the message id. */
  send(attachments?: boolean): Promise<string>;
  /** Replaces the service's settings (a new version: the worker builds a new transport). */
  setSettings(settings: Record<string, unknown>): Promise<void>;
}

export function providerHarness(dialect: Dialect) {
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
    /** `factory` undefined: the built-in transports, in their worker thread (compiled, from dist/). */
    async setup(provider: string, factory: TransportFactory | undefined, settings: Record<string, unknown>): Promise<ProviderSetup> {
      const dataDir = tempDir(closer, 'mailroom-provider-');
      const t = await freshApp(dialect, { MAILROOM_DATA_DIR: dataDir });
      closer.defer(() => t.cleanup());
      await seedOrg(t.store, { credits: 1000, templates: [CONTACT_TEMPLATE, FULL_TEMPLATE] });
      const put = async (s: Record<string, unknown>) => {
        await t.store.services.put('acme', provider, { provider, settings: s, is_default: true, max_per_second: null }, t.clock.now());
      };
      await put(settings);
      const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
      const blobs = openBlobStore({ blobUrl: undefined, dataDir, baseUrl: t.config.baseUrl }).blobs;
      const worker = new DeliveryWorker({
        store: t.store, clock: t.clock, dataDir, pacer: new LocalPacer(t.clock), metrics: createMetrics(), logger: quiet, blobs,
        ...(factory !== undefined ? { transports: { [provider]: factory } } : {}),
      }, { batchSize: 50, leaseMs: 60_000, pollMs: 20, reapEveryMs: 10_000 });
      closer.defer(() => worker.stop(2_000));
      return {
        t, dataDir, worker,
        async send(attachments = true) {
          const res = await t.app.inject({
            method: 'POST', url: '/v1/send', headers: privateHeaders,
            payload: {
              template_id: 'full', template_params: PARAMS,
              ...(attachments ? { attachments: ATTACHMENTS.map((a) => ({ filename: a.filename, content_base64: a.content.toString('base64'), content_type: a.content_type })) } : {}),
            },
          });
          expect(res.statusCode, res.body).toBe(202);
          return (res.json() as { message_id: string }).message_id;
        },
        setSettings: put,
      };
    },
  };
}

export interface MessageView {
  message_id: string;
  status: string;
  events: Array<{ type: string; details?: Record<string, unknown> }>;
}

export async function view(t: TestApp, id: string): Promise<MessageView> {
  const res = await t.app.inject({ method: 'GET', url: `/v1/messages/${id}`, headers: privateHeaders });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as MessageView;
}
