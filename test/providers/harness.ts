import { expect } from 'vitest';
import { openBlobStore } from '../../src/blobs/index.js';
import { LocalPacer } from '../../src/delivery/pacing.js';
import type { TransportFactory } from '../../src/delivery/transport.js';
import { DeliveryWorker } from '../../src/delivery/worker.js';
import { createMetrics } from '../../src/observability/metrics.js';
import type { Dialect } from '../../src/storage/dialect.js';
import { freshApp, type TestApp } from '../support/app.js';
import { type Closer, tempDir } from '../support/cleanup.js';
import { CONTACT_TEMPLATE, captureLogger, privateHeaders, PARAMS } from '../delivery/harness.js';
import { seedOrg } from '../support/seed.js';

/**
 * A provider service through the real send path and the real worker: organization `acme` whose
 * default service `svc` is the provider under test, the `contact` template with Cc, Bcc,
 * Reply-To and attachments allowed, and a worker that loads attachments from the app's blobs.
 */

export const TO = 'owner@acme.test';
export const CC = 'audit@acme.test';
export const BCC = 'archive@acme.test';
export const PDF = Buffer.from('%PDF-1.7\n\u0000\u00ff binary bytes \r\n end', 'latin1');
export const NOTES = Buffer.from('plain notes, ünïcode');

export interface ProviderSetup {
  t: TestApp;
  worker: DeliveryWorker;
  send(): Promise<string>;
}

export async function providerSetup(dialect: Dialect, closer: Closer, provider: string, settings: Record<string, unknown>, factory: TransportFactory): Promise<ProviderSetup> {
  const dir = tempDir(closer, 'mailroom-provider-');
  const t = await freshApp(dialect, { MAILROOM_DATA_DIR: dir });
  closer.defer(() => t.cleanup());
  await seedOrg(t.store, { credits: 1000, templates: [{ ...CONTACT_TEMPLATE, bcc: BCC, allow_attachments: true }] });
  await t.store.services.put('acme', 'svc', { provider, settings: { [provider]: settings }, is_default: true, max_per_second: null }, t.clock.now());
  const blobs = openBlobStore({ blobUrl: undefined, dataDir: dir, baseUrl: t.config.baseUrl }).blobs;
  const worker = new DeliveryWorker({
    store: t.store, clock: t.clock, dataDir: dir, pacer: new LocalPacer(t.clock), metrics: createMetrics(), logger: captureLogger(), blobs,
    transports: { [provider]: factory },
  }, { batchSize: 50, leaseMs: 60_000, pollMs: 20, reapEveryMs: 10_000 });
  closer.defer(() => worker.stop(2_000));
  return {
    t,
    worker,
    async send() {
      const attachments = [
        { filename: 'report.pdf', content_base64: PDF.toString('base64'), content_type: 'application/pdf' },
        { filename: 'notes.txt', content_base64: NOTES.toString('base64') },
      ];
      const res = await t.app.inject({ method: 'POST', url: '/v1/send', headers: privateHeaders, payload: { template_id: 'contact', template_params: PARAMS, attachments } });
      expect(res.statusCode, res.body).toBe(202);
      return (res.json() as { message_id: string }).message_id;
    },
  };
}

export interface Timeline {
  status: string;
  events: Array<{ type: string; details?: Record<string, unknown> }>;
  recipients?: Array<{ address: string; state: string }>;
}

export async function timeline(t: TestApp, id: string): Promise<Timeline> {
  const res = await t.app.inject({ method: 'GET', url: `/v1/messages/${id}`, headers: privateHeaders });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Timeline;
}

export async function suppressed(t: TestApp): Promise<string[]> {
  return (await t.store.suppressions.list('acme')).map((s) => s.email).sort();
}
