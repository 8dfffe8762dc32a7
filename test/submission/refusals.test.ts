import { expect, it } from 'vitest';
import { submissionSizeLimit } from '../../src/send/submission.js';
import { SEND_PIPELINE } from '../../src/submission/wiring.js';
import type { TestApp } from '../support/app.js';
import { countMessages } from '../support/db.js';
import { deliveryHarness, seedSmtpOrg, smtpService } from '../support/delivery.js';
import { describeDialects } from '../support/dialects.js';
import { PRIVATE_KEY } from '../support/seed.js';
import type { Sink } from '../support/smtp-sink.js';
import { dialogue, plain, startSubmissionFor, type Dialogue } from '../support/submission.js';

const FREE_LIMIT = submissionSizeLimit({ plan: 'free' });

/**
 * Per-transaction refusals of the submission listener over the real send path (issue 28):
 * recipients bounded (50), sizes refused before DATA when declared and bounded while reading
 * when not, a suppressed recipient refused alone, a resubmitted Message-ID acknowledged with
 * the first message's id and sent once.
 */
describeDialects('SMTP submission refusals on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  const setup = async (plan: 'pro' | 'free' = 'pro', onBytesKept?: (n: number) => void) => {
    const t = await h.app();
    const sink = await h.sink(t);
    await seedSmtpOrg(t.store, smtpService(sink.port), { plan });
    const s = await startSubmissionFor({
      store: t.store,
      clock: t.clock,
      closer: h.closer,
      pipeline: SEND_PIPELINE,
      onBytesKept,
    });
    const d = await dialogue(s.listener.port, h.closer);
    await d.command('EHLO client.test');
    expect(await d.command(`AUTH PLAIN ${plain('acme', PRIVATE_KEY)}`)).toEqual(['235 2.7.0 Authentication successful']);
    return { t, sink, d };
  };
  const messages = (t: TestApp) => countMessages(t.store, 'acme');
  const submit = async (d: Dialogue, rcpts: string[], body: string): Promise<string[]> => {
    await d.command('MAIL FROM:<app@acme.test>');
    for (const r of rcpts) await d.command(`RCPT TO:<${r}>`);
    await d.command('DATA');
    d.write(body);
    return d.reply();
  };
  const delivered = async (t: TestApp, sink: Sink) => {
    const { worker } = h.worker(t);
    await worker.runOnce();
    return sink.received;
  };

  it.skipIf(skip)('the 51st recipient is 452 4.5.3; the 50 go on', { timeout: 30_000 }, async () => {
    const { d } = await setup();
    await d.command('MAIL FROM:<app@acme.test>');
    for (let i = 1; i <= 50; i++) expect((await d.command(`RCPT TO:<r${i}@example.org>`))[0]).toMatch(/^250 2\.1\.5 /);
    expect((await d.command('RCPT TO:<r51@example.org>'))[0]).toMatch(/^452 4\.5\.3 /);
  });

  it.skipIf(skip)('SIZE= over the organization limit: 552 5.3.4 at MAIL FROM, no DATA, nothing stored', async () => {
    const { t, d } = await setup('free');
    expect(await d.command(`MAIL FROM:<app@acme.test> SIZE=${FREE_LIMIT + 1}`)).toEqual([
      `552 5.3.4 Message size exceeds the limit for this organization (${FREE_LIMIT} bytes)`,
    ]);
    expect((await d.command('RCPT TO:<a@example.org>'))[0]).toMatch(/^503 5\.5\.1 /);
    expect((await d.command(`MAIL FROM:<app@acme.test> SIZE=${FREE_LIMIT}`))[0]).toMatch(/^250 2\.1\.0 /);
    expect(await messages(t)).toBe(0);
  });

  it.skipIf(skip)(
    'undeclared and too big: never more than the limit held, 552 5.3.4 after the dot',
    { timeout: 30_000 },
    async () => {
      let most = 0;
      const { t, d } = await setup('free', (n) => {
        most = Math.max(most, n);
      });
      const line = `${'x'.repeat(998)}\r\n`;
      const body = `From: app@acme.test\r\nSubject: big\r\n\r\n${line.repeat(Math.ceil((FREE_LIMIT * 2) / line.length))}.\r\n`;
      expect(await submit(d, ['a@example.org'], body)).toEqual([
        `552 5.3.4 Message size exceeds the limit for this organization (${FREE_LIMIT} bytes)`,
      ]);
      expect(most).toBeLessThanOrEqual(FREE_LIMIT);
      expect(await messages(t)).toBe(0);
    },
  );

  it.skipIf(skip)(
    'a suppressed recipient is 550 5.1.1 at RCPT; the message goes to the others',
    { timeout: 30_000 },
    async () => {
      const { t, sink, d } = await setup();
      await t.store.suppressions.add('acme', 'gone@example.org', 'manual', t.clock.now());
      await d.command('MAIL FROM:<app@acme.test>');
      expect((await d.command('RCPT TO:<ok@example.org>'))[0]).toMatch(/^250 /);
      expect((await d.command('RCPT TO:<gone@example.org>'))[0]).toMatch(/^550 5\.1\.1 /);
      expect((await d.command('RCPT TO:<also@example.org>'))[0]).toMatch(/^250 /);
      await d.command('DATA');
      d.write('From: app@acme.test\r\nSubject: s\r\n\r\nHi\r\n.\r\n');
      expect((await d.reply())[0]).toMatch(/^250 2\.0\.0 Ok: queued as msg_/);
      const received = await delivered(t, sink);
      expect(received[0]?.rcptTo.sort()).toEqual(['also@example.org', 'ok@example.org']);
    },
  );

  it.skipIf(skip)('a resubmitted Message-ID: the same id, one message, sent once', { timeout: 30_000 }, async () => {
    const { t, sink, d } = await setup();
    const body = 'From: app@acme.test\r\nMessage-ID: <order-42@app.test>\r\nSubject: once\r\n\r\nHi\r\n.\r\n';
    const first = await submit(d, ['a@example.org'], body);
    const again = await submit(d, ['a@example.org'], body);
    expect(first[0]).toMatch(/^250 2\.0\.0 Ok: queued as msg_\S+$/);
    expect(again).toEqual(first);
    expect(await messages(t)).toBe(1);
    expect(await delivered(t, sink)).toHaveLength(1);
  });
});
