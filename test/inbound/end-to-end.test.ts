import nodemailer from 'nodemailer';
import pino from 'pino';
import { expect, it } from 'vitest';
import { startInbound } from '../../src/cli/runtime.js';
import { verpSecret } from '../../src/delivery/verp.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { PARAMS, deliveryHarness, privateHeaders, seedSmtpOrg, send, smtpService, view } from '../support/delivery.js';
import type { TestApp } from '../support/app.js';
import { bounceReport } from '../support/bounce-reports.js';
import { tempDir } from '../support/cleanup.js';
import { describeDialects } from '../support/dialects.js';

const OWNER = 'owner@acme.test';
const AUDIT = 'audit@acme.test';

describeDialects('VERP bounces and complaints end to end, on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  async function setup() {
    const t = await h.app();
    const sink = await h.sink(t);
    await seedSmtpOrg(
      t.store,
      smtpService(sink.port, { bounce_domain: 'bounces.acme.test', complaint_address: 'fbl@acme.test' }),
    );
    const dataDir = tempDir(h.closer, 'verp-e2e-');
    const { worker } = h.worker(t, { dataDir });
    const metrics = createMetrics();
    const logger = pino({ level: 'silent' });
    // Wired as `mailroom serve` wires it (runtime.ts).
    const services = { store: t.store, clock: t.clock, metrics, notifier: { notify: () => undefined }, logger };
    const listener = await startInbound(services, verpSecret(dataDir, {}), { port: 0, host: '127.0.0.1' });
    h.closer.defer(() => listener.close());
    const client = nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, ignoreTLS: true });
    const deliver = (to: string, raw: Buffer) => client.sendMail({ envelope: { from: '', to: [to] }, raw });
    const id = await send(t);
    expect(await worker.runOnce()).toBe(1);
    const verpOf = (rcpt: string) => sink.received.find((r) => r.rcptTo[0] === rcpt)!.mailFrom;
    return { t, id, deliver, verpOf, metrics };
  }

  const suppressedSend = async (t: TestApp) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/send',
      headers: privateHeaders,
      payload: { template_id: 'contact', template_params: PARAMS },
    });
    return res;
  };

  it.skipIf(skip)(
    'hard bounces of both recipients: bounced, timeline, suppression, 451 on the next send; the same DSN again is one event',
    async () => {
      const s = await setup();
      const ownerDsn = bounceReport('postfix-user-unknown.eml', { VERP: s.verpOf(OWNER), RCPT: OWNER });
      expect((await s.deliver(s.verpOf(OWNER), ownerDsn)).response).toMatch(/^250/);
      await s.deliver(s.verpOf(OWNER), ownerDsn);
      const partial = await view(s.t, s.id);
      expect(partial.status).toBe('sent');
      expect(partial.events.filter((e) => e.type === 'bounced')).toHaveLength(1);
      await s.deliver(s.verpOf(AUDIT), bounceReport('exchange-ndr.eml', { VERP: s.verpOf(AUDIT), RCPT: AUDIT }));
      const v = await view(s.t, s.id);
      expect(v.status).toBe('bounced');
      expect(v.events.filter((e) => e.type === 'bounced')).toHaveLength(2);
      const res = await suppressedSend(s.t);
      expect(res.statusCode, res.body).toBe(451);
      expect(res.json()).toMatchObject({ error: { code: 'recipient_suppressed' } });
    },
  );

  it.skipIf(skip)('a feedback report to the complaint address: complained', async () => {
    const s = await setup();
    await s.deliver(
      'fbl@acme.test',
      bounceReport('yahoo-arf.eml', { VERP: s.verpOf(AUDIT), RCPT: AUDIT, COMPLAINT: 'fbl@acme.test' }),
    );
    const v = await view(s.t, s.id);
    expect(v.status).toBe('complained');
    expect(v.events.map((e) => e.type)).toContain('complained');
  });

  it.skipIf(skip)('attacker: a forged token changes nothing', async () => {
    const s = await setup();
    const real = s.verpOf(OWNER);
    const forged = real.replace(/\+([a-z2-7])/, (_, c: string) => `+${c === 'a' ? 'b' : 'a'}`);
    expect((await s.deliver(forged, bounceReport('postfix-user-unknown.eml', { VERP: forged, RCPT: OWNER }))).response).toMatch(
      /^250/,
    );
    const v = await view(s.t, s.id);
    expect(v.status).toBe('sent');
    expect(v.events.map((e) => e.type)).not.toContain('bounced');
    expect(await s.metrics.registry.getSingleMetricAsString('mailroom_inbound_reports_total')).toMatch(/outcome="bad_token"} 1/);
  });
});
