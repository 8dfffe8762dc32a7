import fs from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.js';
import { messageEventPayload } from '../../src/webhooks/payload.js';
import { buildTestApp, testConfig, type TestApp } from '../support/app.js';
import { freshStore } from '../support/stores.js';
import { addresses, smtpError, startSink } from '../support/smtp-sink.js';
import {
  CONTACT_TEMPLATE,
  deliveryHarness,
  newWorker,
  PARAMS,
  row,
  seedSmtpOrg,
  send,
  smtpService,
} from '../support/delivery.js';
import { tempDir } from '../support/cleanup.js';
import { describeDialects } from '../support/dialects.js';

/** The value of one sample line of a Prometheus text exposition, or undefined when absent. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describeDialects('outbox transport and /metrics on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)(
    'the outbox transport writes <data_dir>/outbox/<message id>.eml that parses back to the same email',
    async () => {
      const t = await h.app();
      await seedSmtpOrg(t.store, { id: 'outbox', provider: 'outbox', default: true });
      const dataDir = tempDir(h.closer);
      const { worker } = newWorker({ store: t.store, clock: t.clock, dataDir }, h.closer);
      const id = await send(t);

      expect(await worker.runOnce()).toBe(1);
      const m = await row(t.store, id);
      expect(m.status).toBe('sent');
      const dir = path.join(dataDir, 'outbox');
      expect(fs.readdirSync(dir)).toEqual([`${id}.eml`]); // no temporary file left behind
      const mail = await simpleParser(fs.readFileSync(path.join(dir, `${id}.eml`)));
      expect(mail.subject).toBe(`Message from ${PARAMS.name}`);
      expect(addresses(mail.from)).toEqual([{ name: 'Acme Support', address: 'noreply@acme.test' }]);
      expect(addresses(mail.to)).toEqual([{ name: 'Acme Owner', address: 'owner@acme.test' }]);
      expect(addresses(mail.cc)).toEqual([{ name: '', address: 'audit@acme.test' }]);
      expect(mail.text?.trim()).toBe(PARAMS.message);
      expect(mail.messageId).toBe(m.header_message_id);
      const sent = await t.store.messages.events(id);
      expect(sent.at(-1)).toMatchObject({ type: 'sent' });
      // Named relative to the data dir: the detail reaches organizations' webhook receivers
      // (issue 25: it carried the server's absolute path).
      const detail = sent.at(-1)?.detail ?? {};
      expect(detail.response).toBe(`written to outbox/${id}.eml`);
      const payload = messageEventPayload({
        eventType: 'sent',
        at: t.clock.now(),
        detail: JSON.stringify(detail),
        messageId: id,
        orgId: 'acme',
        templateId: 'contact',
        serviceId: 'outbox',
        messageStatus: 'sent',
        sequence: 1,
        mode: 'live',
        simulated: false,
      });
      expect(payload).toContain(`written to outbox/${id}.eml`);
      expect(payload).not.toContain(dataDir);
    },
  );

  it.skipIf(skip)(
    '/metrics after sends and delivery: accepted, sent, deferred, queue depth and the send-duration histogram',
    async () => {
      const ts = await freshStore(dialect);
      h.closer.defer(() => ts.cleanup());
      const metrics = createMetrics(() => ts.store.queue.depth(ts.clock.now()));
      const app = await buildTestApp(testConfig(), { store: ts.store, clock: ts.clock, metrics });
      await app.ready();
      h.closer.defer(() => app.close());
      const t: TestApp = { ...ts, app, config: testConfig(), cleanup: async () => undefined };
      // The first DATA is deferred once (451), the others go through.
      const sink = await startSink(
        { clock: ts.clock, data: (_raw, n) => (n === 1 ? smtpError(451, '4.3.2 Busy') : undefined) },
        h.closer,
      );
      await seedSmtpOrg(ts.store, smtpService(sink.port), { templates: [CONTACT_TEMPLATE] });
      const { worker } = newWorker(
        { store: ts.store, clock: ts.clock, dataDir: tempDir(h.closer), metrics, options: { batchSize: 1 } },
        h.closer,
      );
      const scrape = async () => {
        // The queue gauges share one database read per scrape, forgotten on the next event-loop
        // turn (setImmediate); a scraper never asks twice in one turn, and neither must we.
        await new Promise((resolve) => setImmediate(resolve));
        const res = await app.inject({ method: 'GET', url: '/metrics' });
        expect(res.statusCode).toBe(200);
        expect(String(res.headers['content-type'])).toMatch(/^text\/plain/);
        return res.body;
      };
      const svc = '{service="smtp"}';

      for (let i = 0; i < 3; i++) await send(t);
      const before = await scrape();
      expect(sample(before, 'mailroom_messages_accepted_total', svc)).toBe(3);
      expect(sample(before, 'mailroom_queue_depth')).toBe(3);
      expect(sample(before, 'mailroom_queue_due')).toBe(3);
      expect(sample(before, 'mailroom_messages_sent_total', svc)).toBeUndefined();

      // Batches of one: the first attempt is deferred, then the two others are sent.
      expect(await worker.runOnce()).toBe(1);
      expect(await worker.runOnce()).toBe(1);
      expect(await worker.runOnce()).toBe(1);
      const mid = await scrape();
      expect(sample(mid, 'mailroom_messages_deferred_total', svc)).toBe(1);
      expect(sample(mid, 'mailroom_messages_sent_total', svc)).toBe(2);
      expect(sample(mid, 'mailroom_queue_depth')).toBe(1); // the deferred one, waiting
      expect(sample(mid, 'mailroom_queue_due')).toBe(0);

      ts.clock.advance(60_000);
      const due = await scrape();
      expect(sample(due, 'mailroom_queue_due')).toBe(1);
      expect(sample(due, 'mailroom_queue_oldest_due_age_seconds')).toBeGreaterThan(0);
      expect(await worker.runOnce()).toBe(1);

      const after = await scrape();
      expect(sample(after, 'mailroom_messages_accepted_total', svc)).toBe(3);
      expect(sample(after, 'mailroom_messages_sent_total', svc)).toBe(3);
      expect(sample(after, 'mailroom_messages_deferred_total', svc)).toBe(1);
      expect(sample(after, 'mailroom_queue_depth')).toBe(0);
      expect(sample(after, 'mailroom_queue_oldest_due_age_seconds')).toBe(0);
      // Histogram: one observation per message handed over.
      expect(sample(after, 'mailroom_send_duration_seconds_count', svc)).toBe(3);
      expect(sample(after, 'mailroom_send_duration_seconds_bucket', '{le="+Inf",service="smtp"}')).toBe(3);
      expect(sample(after, 'mailroom_send_duration_seconds_sum', svc)).toBeGreaterThan(0);
      expect(after).toMatch(/^# TYPE mailroom_send_duration_seconds histogram$/m);
      expect(sink.received).toHaveLength(3);
    },
  );
});
