import { generateKeyPairSync } from 'node:crypto';
import { expect, it } from 'vitest';
import { DEFAULT_RETRY } from '../../src/delivery/retry.js';
import { addresses, messageIdOf, smtpError } from '../support/smtp-sink.js';
import {
  CONTACT_TEMPLATE,
  deliveryHarness,
  PARAMS,
  privateHeaders,
  row,
  seedSmtpOrg,
  send,
  smtpService,
  view,
} from '../support/delivery.js';
import { creditsOf, eventTypes } from '../support/stored.js';
import { describeDialects } from '../support/dialects.js';

describeDialects('delivery outcomes against an SMTP sink on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)('happy path: the received message has every header and part; sent, with the timeline and history', async () => {
    const { t, sink } = await h.smtpApp();
    const { worker, logger } = h.worker(t);

    const id = await send(t);
    const accepted = await row(t.store, id);
    expect(accepted.status).toBe('queued');
    expect(await worker.runOnce()).toBe(1);

    expect(sink.received).toHaveLength(1);
    const got = sink.received[0]!;
    expect(got.mailFrom).toBe('noreply@acme.test');
    expect([...got.rcptTo].sort()).toEqual(['audit@acme.test', 'owner@acme.test']);
    const mail = await sink.parse(0);
    expect(addresses(mail.from)).toEqual([{ name: 'Acme Support', address: 'noreply@acme.test' }]);
    expect(addresses(mail.to)).toEqual([{ name: 'Acme Owner', address: 'owner@acme.test' }]);
    expect(addresses(mail.cc)).toEqual([{ name: '', address: 'audit@acme.test' }]);
    expect(addresses(mail.replyTo)).toEqual([{ name: PARAMS.name, address: PARAMS.email }]);
    expect(mail.subject).toBe(`Message from ${PARAMS.name}`);
    expect(mail.text?.trim()).toBe(PARAMS.message);
    expect(String(mail.html).trim()).toBe(`<p>${PARAMS.message}</p>`);
    expect(mail.headers.has('bcc')).toBe(false);

    const sent = await row(t.store, id);
    expect(mail.messageId).toBe(sent.header_message_id);
    expect(got.messageId).toBe(sent.header_message_id);
    expect(sent.status).toBe('sent');
    expect(sent.sent_at).toBe(t.clock.now());
    expect(sent.attempts).toBe(1);
    expect(sent.lease_until).toBeNull();

    const v = await view(t, id);
    expect(v.status).toBe('sent');
    expect(v.sent_at).toBe(new Date(t.clock.now()).toISOString());
    expect(v.events.map((e) => e.type)).toEqual(['queued', 'sending', 'sent']);

    const history = await t.app.inject({ method: 'GET', url: '/v1/history', headers: privateHeaders });
    expect(history.statusCode, history.body).toBe(200);
    const items = (history.json() as { items: Array<{ message_id: string; status: string; sent_at: string | null }> }).items;
    expect(items.find((i) => i.message_id === id)).toMatchObject({ status: 'sent', sent_at: v.sent_at });

    // One structured log line per attempt, naming the message and the service.
    expect(logger.entries.filter((e) => e.msg === 'delivery attempt')).toEqual([
      expect.objectContaining({
        level: 'info',
        obj: expect.objectContaining({ message_id: id, service_id: 'smtp', outcome: 'sent' }),
      }),
    ]);
    // Nothing left to do.
    expect(await worker.runOnce()).toBe(0);
    expect(sink.received).toHaveLength(1);
  });

  it.skipIf(skip)('Bcc recipients are in the envelope, never in the headers; DKIM signs with the service key', async () => {
    const t = await h.app();
    const sink = await h.sink(t);
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const dkim = {
      domain_name: 'acme.test',
      key_selector: 'mr2026',
      private_key: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    };
    const service = smtpService(sink.port);
    await seedSmtpOrg(
      t.store,
      { ...service, smtp: { ...service.smtp!, dkim } },
      { templates: [{ ...CONTACT_TEMPLATE, bcc: 'archive@acme.test' }] },
    );
    const { worker } = h.worker(t);
    await send(t);
    expect(await worker.runOnce()).toBe(1);
    const got = sink.received[0]!;
    expect([...got.rcptTo].sort()).toEqual(['archive@acme.test', 'audit@acme.test', 'owner@acme.test']);
    expect(got.raw.toString('utf8')).not.toMatch(/^bcc:/im);
    expect(got.raw.toString('utf8')).not.toContain('archive@acme.test');
    const signature =
      /^DKIM-Signature:(.*(?:\r\n[ \t].*)*)/im.exec(got.raw.toString('utf8'))?.[1]?.replace(/\r\n[ \t]+/g, ' ') ?? '';
    expect(signature).toMatch(/\bd=acme\.test\b/);
    expect(signature).toMatch(/\bs=mr2026\b/);
  });

  for (const phase of ['RCPT', 'DATA'] as const) {
    it.skipIf(skip)(
      `451 on the first ${phase}, then accepted: deferred with backoff, waits for its time, then sent with the same Message-ID`,
      async () => {
        const t = await h.app();
        const sink = await h.sink(
          t,
          phase === 'RCPT'
            ? { rcpt: (_a, n) => (n === 1 ? smtpError(451, '4.3.0 Try again later') : undefined) }
            : { data: (_raw, n) => (n === 1 ? smtpError(451, '4.3.0 Try again later') : undefined) },
        );
        await seedSmtpOrg(t.store, smtpService(sink.port));
        const { worker } = h.worker(t);
        const id = await send(t);

        const t0 = t.clock.now();
        expect(await worker.runOnce()).toBe(1);
        expect(sink.received).toHaveLength(0);
        const deferred = await row(t.store, id);
        expect(deferred.status).toBe('queued');
        expect(deferred.attempts).toBe(1);
        expect(deferred.last_error).toMatch(/451/);
        const next = deferred.next_attempt_at ?? 0;
        // First retry: 30 s ± 20 %.
        expect(next).toBeGreaterThanOrEqual(t0 + 24_000);
        expect(next).toBeLessThanOrEqual(t0 + 36_000);

        const v = await view(t, id);
        expect(v.status).toBe('queued');
        expect(v.events.map((e) => e.type)).toEqual(['queued', 'sending', 'deferred']);
        const ev = v.events[2]!;
        expect(String(ev.details?.reason)).toMatch(/451/);
        expect(String(ev.details?.reason)).toMatch(/Try again later/);
        expect(ev.details?.retry_at).toBe(new Date(next).toISOString());

        // Not due yet: nothing is claimed, nothing reaches the sink.
        const rcpts = sink.rcptAttempts.length;
        t.clock.set(next - 1);
        expect(await worker.runOnce()).toBe(0);
        expect(sink.rcptAttempts).toHaveLength(rcpts);
        expect((await row(t.store, id)).status).toBe('queued');

        t.clock.set(next);
        expect(await worker.runOnce()).toBe(1);
        expect(sink.received).toHaveLength(1);
        const sent = await row(t.store, id);
        expect(sent.status).toBe('sent');
        expect(sent.attempts).toBe(2);
        expect(sent.sent_at).toBe(next);
        expect(sink.received[0]!.messageId).toBe(sent.header_message_id);
        if (phase === 'DATA') {
          // Both attempts carried the message; both had the same Message-ID.
          expect(sink.dataAttempts).toHaveLength(2);
          expect(sink.dataAttempts.map((raw) => messageIdOf(raw))).toEqual([sent.header_message_id, sent.header_message_id]);
        }
        expect(await eventTypes(t.store, id)).toEqual(['queued', 'sending', 'deferred', 'sending', 'sent']);
      },
    );
  }

  it.skipIf(skip)(
    'always 4xx: retried with growing, capped delays, then failed after DEFAULT_RETRY.maxAttempts attempts',
    async () => {
      const { t, sink } = await h.smtpApp({ rcpt: () => smtpError(450, '4.2.1 Mailbox busy') });
      const { worker } = h.worker(t);
      const id = await send(t);

      const delays: number[] = [];
      for (let guard = 0; guard < 50; guard++) {
        const before = t.clock.now();
        expect(await worker.runOnce()).toBe(1);
        const m = await row(t.store, id);
        if (m.status !== 'queued') break;
        const next = m.next_attempt_at ?? 0;
        delays.push(next - before);
        t.clock.set(next);
      }
      const final = await row(t.store, id);
      expect(final.status).toBe('failed');
      expect(final.attempts).toBe(DEFAULT_RETRY.maxAttempts);
      expect(new Set(sink.rcptAttempts).size).toBe(2); // owner and audit, every attempt
      expect(sink.rcptAttempts.length).toBeGreaterThanOrEqual(DEFAULT_RETRY.maxAttempts);
      expect(sink.received).toHaveLength(0);
      expect(delays).toHaveLength(DEFAULT_RETRY.maxAttempts - 1);
      delays.forEach((d, k) => {
        const nominal = Math.min(DEFAULT_RETRY.maxDelayMs, DEFAULT_RETRY.baseMs * DEFAULT_RETRY.factor ** k);
        expect(d).toBeGreaterThanOrEqual(nominal * (1 - DEFAULT_RETRY.jitter) - 1);
        expect(d).toBeLessThanOrEqual(nominal * (1 + DEFAULT_RETRY.jitter) + 1);
      });
      const types = await eventTypes(t.store, id);
      expect(types.filter((e) => e === 'sending')).toHaveLength(DEFAULT_RETRY.maxAttempts);
      expect(types.filter((e) => e === 'deferred')).toHaveLength(DEFAULT_RETRY.maxAttempts - 1);
      expect(types.at(-1)).toBe('failed');
      const v = await view(t, id);
      expect(v.status).toBe('failed');
      expect(String(v.events.at(-1)?.details?.reason)).toMatch(new RegExp(`${DEFAULT_RETRY.maxAttempts} attempts.*450`));
      expect(await worker.runOnce()).toBe(0);
    },
  );

  it.skipIf(skip)('always 4xx with a small policy: failed once the maximum age would be passed', async () => {
    const { t } = await h.smtpApp({ rcpt: () => smtpError(451, '4.4.1 No answer from host') });
    const retry = { baseMs: 1_000, factor: 2, maxDelayMs: 10_000, jitter: 0, maxAttempts: 100, maxAgeMs: 5_000 };
    const { worker } = h.worker(t, { retry });
    const id = await send(t);
    // Attempts at 0 s (retry +1 s), 1 s (+2 s), 3 s (+4 s would be 7 s > 5 s of age) → failed.
    for (const expected of [1_000, 3_000]) {
      expect(await worker.runOnce()).toBe(1);
      const m = await row(t.store, id);
      expect(m.status).toBe('queued');
      expect((m.next_attempt_at ?? 0) - m.created_at).toBe(expected);
      t.clock.set(m.next_attempt_at ?? 0);
    }
    expect(await worker.runOnce()).toBe(1);
    const m = await row(t.store, id);
    expect(m.status).toBe('failed');
    expect(m.attempts).toBe(3);
  });

  it.skipIf(skip)(
    '550 5.1.1 user unknown on RCPT: bounced, recipient suppressed as hard_bounce, a later send refused 451',
    async () => {
      const t = await h.app();
      const sink = await h.sink(t, {
        rcpt: (address) => (address === 'owner@acme.test' ? smtpError(550, '5.1.1 User unknown') : undefined),
      });
      await seedSmtpOrg(t.store, smtpService(sink.port), { templates: [{ ...CONTACT_TEMPLATE, cc: '' }] });
      const { worker, metrics } = h.worker(t);
      const id = await send(t);

      expect(await worker.runOnce()).toBe(1);
      expect(sink.received).toHaveLength(0);
      const m = await row(t.store, id);
      expect(m.status).toBe('bounced');
      expect(m.last_error).toMatch(/550 5\.1\.1 User unknown/);
      expect(await eventTypes(t.store, id)).toEqual(['queued', 'sending', 'bounced']);
      expect((await view(t, id)).status).toBe('bounced');
      expect(await t.store.suppressions.findAmong('acme', ['owner@acme.test', 'audit@acme.test'])).toEqual(['owner@acme.test']);
      expect((await t.store.suppressions.get('acme', 'owner@acme.test'))?.reason).toBe('hard_bounce');
      // The admin API's list says which message's bounce put it there.
      expect((await t.store.suppressions.page('acme', { q: 'owner@acme.test' }))[0]?.message_id).toBe(id);
      expect(await metrics.registry.getSingleMetricAsString('mailroom_messages_bounced_total')).toMatch(/service="smtp"} 1/);

      const again = await t.app.inject({
        method: 'POST',
        url: '/v1/send',
        headers: privateHeaders,
        payload: { template_id: 'contact', template_params: PARAMS },
      });
      expect(again.statusCode, again.body).toBe(451);
      expect((again.json() as { error: { code: string } }).error.code).toBe('recipient_suppressed');
    },
  );

  it.skipIf(skip)('554 on DATA: failed, the recipients are not suppressed, the credit is kept', async () => {
    const { t, sink } = await h.smtpApp({ data: () => smtpError(554, '5.6.0 Message rejected') });
    const { worker } = h.worker(t);
    const before = await creditsOf(t);
    const id = await send(t);

    expect(await worker.runOnce()).toBe(1);
    const m = await row(t.store, id);
    expect(m.status).toBe('failed');
    expect(m.last_error).toMatch(/554/);
    expect(sink.dataAttempts).toHaveLength(1);
    expect(sink.received).toHaveLength(0);
    expect(await eventTypes(t.store, id)).toEqual(['queued', 'sending', 'failed']);
    expect(await t.store.suppressions.findAmong('acme', ['owner@acme.test', 'audit@acme.test'])).toEqual([]);
    // Documented choice (worker.ts, finish): a message attempted and failed keeps its credit.
    expect(await creditsOf(t)).toBe(before - 1);
    // Not retried.
    t.clock.advance(24 * 3_600_000);
    expect(await worker.runOnce()).toBe(0);
  });

  it.skipIf(skip)('550 on MAIL FROM (the sender refused): failed, and no recipient is suppressed', async () => {
    // nodemailer reports a refused MAIL FROM as EENVELOPE: it says nothing about the recipients' mailboxes.
    const { t, sink } = await h.smtpApp({ mailFrom: () => smtpError(550, '5.7.1 Sender address rejected: not owned by user') });
    const { worker } = h.worker(t);
    const id = await send(t);
    expect(await worker.runOnce()).toBe(1);
    expect(sink.received).toHaveLength(0);
    expect(await t.store.suppressions.findAmong('acme', ['owner@acme.test', 'audit@acme.test'])).toEqual([]);
    expect((await row(t.store, id)).status).toBe('failed');
  });

  it.skipIf(skip)(
    '550 5.7.1 "Relaying denied" on RCPT (a relay policy, not a mailbox): not bounced, no recipient suppressed',
    async () => {
      // A relay refusing to relay (typically: credentials missing) says nothing about the
      // recipients; issue 4 bounces and suppresses only "when the reply says the mailbox does not exist".
      const { t } = await h.smtpApp({ rcpt: () => smtpError(550, '5.7.1 Relaying denied') });
      const { worker } = h.worker(t);
      const id = await send(t);
      expect(await worker.runOnce()).toBe(1);
      expect(await t.store.suppressions.findAmong('acme', ['owner@acme.test', 'audit@acme.test'])).toEqual([]);
      expect(['failed', 'held_service_error']).toContain((await row(t.store, id)).status);
    },
  );

  it.skipIf(skip)(
    'a Cc refused 550 5.1.1 while the To accepts: sent, the refusal recorded as a bounced event naming the Cc',
    async () => {
      const { t, sink } = await h.smtpApp({
        rcpt: (address) => (address === 'audit@acme.test' ? smtpError(550, '5.1.1 User unknown') : undefined),
      });
      const { worker } = h.worker(t);
      const id = await send(t);
      expect(await worker.runOnce()).toBe(1);
      expect(sink.received.map((r) => r.rcptTo)).toEqual([['owner@acme.test']]);
      const v = await view(t, id);
      expect(v.status).toBe('sent');
      // Issue 11 §3: each refused recipient is named in an event of its own; `sent` names the others.
      expect(v.events.map((e) => e.type)).toEqual(['queued', 'sending', 'bounced', 'sent']);
      expect(v.events[2]?.details).toMatchObject({ recipient: 'audit@acme.test', hard: true });
      expect(v.events[3]?.details?.recipients).toEqual(['owner@acme.test']);
    },
  );

  it.skipIf(skip)(
    'a Cc refused "550 5.1.1 User unknown" while the To accepts: that mailbox is suppressed as a hard bounce',
    async () => {
      // Issue 4: a reply saying the mailbox does not exist puts the recipient on the suppression list.
      const { t } = await h.smtpApp({
        rcpt: (address) => (address === 'audit@acme.test' ? smtpError(550, '5.1.1 User unknown') : undefined),
      });
      const { worker } = h.worker(t);
      await send(t);
      expect(await worker.runOnce()).toBe(1);
      expect(await t.store.suppressions.findAmong('acme', ['owner@acme.test', 'audit@acme.test'])).toEqual(['audit@acme.test']);
    },
  );
});
