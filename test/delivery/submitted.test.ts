import { generateKeyPairSync } from 'node:crypto';
import { expect, it, vi } from 'vitest';
import { inboxBlobKey } from '../../src/delivery/transports/sandbox.js';
import { databaseOf } from '../support/db.js';
import { deliveryHarness, seedSmtpOrg, smtpService } from '../support/delivery.js';
import { describeDialects } from '../support/dialects.js';
import { PRIVATE_KEY, PUBLIC_KEY } from '../support/seed.js';
import { testBlobs } from '../support/test-mode.js';
import { BASIC_HEADERS, callerOf, depsFor, message, submit, TEST_MODE_KEY } from '../send/submission-support.js';

// A submitted message (SMTP submission, issue 28) through the real worker: handed off as
// submitted, byte for byte, to a real SMTP sink, the test inbox and the simulator.

const PM_EVENTS = { source: 'postmark' as const, username: 'hook', password: 'pm-secret-password' };
const KEYS = [
  { type: 'public' as const, key: PUBLIC_KEY },
  { type: 'private' as const, key: PRIVATE_KEY },
  { type: 'private' as const, key: TEST_MODE_KEY, mode: 'test' as const },
];

/** Bcc (folded), a dot-leading line, 8-bit UTF-8, an attachment: what must survive or go. */
const SUBMITTED_HEAD = [
  ...BASIC_HEADERS,
  'Bcc: Hidden <hidden@example.net>,\r\n  also@example.net',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="b1"',
];
const SUBMITTED_BODY =
  '--b1\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n' +
  'Grüße aus Köln\r\n.a line starting with a dot\r\n..two dots\r\n' +
  '--b1\r\nContent-Type: application/pdf; name="report.pdf"\r\nContent-Disposition: attachment; filename="report.pdf"\r\n' +
  'Content-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjcgYSByZXBvcnQK\r\n--b1--\r\n';
/** What every hand-off must carry: the submission without its Bcc field, every other byte as it was. */
const WITHOUT_BCC = message(
  SUBMITTED_HEAD.filter((h) => !h.startsWith('Bcc:')),
  SUBMITTED_BODY,
);

describeDialects('submitted messages delivered on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)('to an SMTP relay: the submission minus Bcc plus the tracking header, envelope = recipients', async () => {
    const t = await h.app();
    const sink = await h.sink(t);
    await seedSmtpOrg(t.store, smtpService(sink.port, { events: PM_EVENTS }), { keys: KEYS });
    const deps = depsFor(t, h.closer);
    const caller = await callerOf(t.store, PRIVATE_KEY);
    const mime = message(SUBMITTED_HEAD, SUBMITTED_BODY);
    const { messageId } = await submit(deps, caller, mime, ['ann@example.com', 'hidden@example.net']);
    const { worker } = h.worker(t);
    expect(await worker.runOnce()).toBe(1);

    expect(sink.received).toHaveLength(1);
    const expected = Buffer.concat([Buffer.from(`X-PM-Metadata-mailroom_message_id: ${messageId}\r\n`), WITHOUT_BCC]);
    expect(sink.received[0]?.raw.toString('latin1')).toBe(expected.toString('latin1'));
    expect(sink.received[0]?.raw.equals(expected)).toBe(true);
    expect(sink.received[0]?.rcptTo).toEqual(['ann@example.com', 'hidden@example.net']);
    expect((await t.store.messages.get('acme', messageId))?.status).toBe('sent');
  });

  it.skipIf(skip)('DKIM: the service key signs the submitted bytes, which stay as they were after the signature', async () => {
    const t = await h.app();
    const sink = await h.sink(t);
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const dkim = {
      domain_name: 'acme.test',
      key_selector: 'mr2026',
      private_key: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    };
    const service = smtpService(sink.port);
    await seedSmtpOrg(t.store, { ...service, smtp: { ...service.smtp!, dkim } }, { keys: KEYS });
    const deps = depsFor(t, h.closer);
    await submit(deps, await callerOf(t.store, PRIVATE_KEY), message(SUBMITTED_HEAD, SUBMITTED_BODY));
    const { worker } = h.worker(t);
    await worker.runOnce();
    const raw = sink.received[0]?.raw.toString('latin1') ?? '';
    const signature = /^DKIM-Signature:(?:.*)(?:\r\n[ \t].*)*\r\n/.exec(raw)?.[0] ?? '';
    expect(signature.replace(/\r\n[ \t]+/g, ' ')).toMatch(/\bd=acme\.test\b.*\bs=mr2026\b|\bs=mr2026\b.*\bd=acme\.test\b/);
    expect(raw.slice(signature.length)).toBe(WITHOUT_BCC.toString('latin1'));
  });

  it.skipIf(skip)('VERP: one transaction per recipient, the same bytes each', async () => {
    const t = await h.app();
    const sink = await h.sink(t);
    await seedSmtpOrg(t.store, smtpService(sink.port, { bounce_domain: 'bounces.acme.test' }), { keys: KEYS });
    const deps = depsFor(t, h.closer);
    const mime = message(SUBMITTED_HEAD, SUBMITTED_BODY);
    await submit(deps, await callerOf(t.store, PRIVATE_KEY), mime, ['ann@example.com', 'hidden@example.net']);
    const { worker } = h.worker(t);
    await worker.runOnce();
    expect(sink.received.map((r) => r.rcptTo)).toEqual(expect.arrayContaining([['ann@example.com'], ['hidden@example.net']]));
    for (const r of sink.received) {
      expect(r.mailFrom).toMatch(/^bounce\+[a-z2-7]+@bounces\.acme\.test$/);
      expect(r.raw.equals(WITHOUT_BCC)).toBe(true);
    }
  });

  it.skipIf(skip)('a test key: captured in the test inbox byte for byte, nothing reaches the relay', async () => {
    const t = await h.app();
    const sink = await h.sink(t);
    await seedSmtpOrg(t.store, smtpService(sink.port, { events: PM_EVENTS }), { keys: KEYS });
    const deps = depsFor(t, h.closer);
    const mime = message(SUBMITTED_HEAD, SUBMITTED_BODY);
    const { messageId } = await submit(deps, await callerOf(t.store, TEST_MODE_KEY), mime, ['ann@example.com']);
    const blobs = testBlobs(h.closer);
    const { worker } = h.worker(t, { blobs });
    await worker.runOnce();
    expect(sink.received).toHaveLength(0);
    const entry = await t.store.testInbox.get('acme', messageId);
    expect(entry).toMatchObject({ template_id: '@smtp', subject: 'Hello', from_addr: 'app@acme.test' });
    expect((await blobs.get(inboxBlobKey('acme', messageId))).equals(WITHOUT_BCC)).toBe(true);
    expect((await t.store.messages.get('acme', messageId))?.status).toBe('sent');
  });

  it.skipIf(skip)('simulator addresses answer as for API sends (a bounce bounces), nothing reaches the relay', async () => {
    const t = await h.app();
    const sink = await h.sink(t);
    await seedSmtpOrg(t.store, smtpService(sink.port), { keys: KEYS });
    const deps = depsFor(t, h.closer);
    const caller = await callerOf(t.store, PRIVATE_KEY);
    const delivered = await submit(deps, caller, message(BASIC_HEADERS), ['delivered@simulator.mailroom.test']);
    const bounced = await submit(deps, caller, message(['From: app@acme.test']), ['bounce@simulator.mailroom.test']);
    const { worker } = h.worker(t);
    await worker.runOnce();
    expect(sink.received).toHaveLength(0);
    expect((await t.store.messages.get('acme', delivered.messageId))?.status).toBe('delivered');
    expect((await t.store.messages.get('acme', bounced.messageId))?.status).toBe('bounced');
  });

  it.skipIf(skip)(
    'the bytes are read where used only: not for simulator addresses, not for a retry already captured',
    async () => {
      const t = await h.app();
      const sink = await h.sink(t);
      await seedSmtpOrg(t.store, smtpService(sink.port), { keys: KEYS });
      const deps = depsFor(t, h.closer);
      const reads = vi.spyOn(t.store.messages, 'submittedMime');
      const simulated = await submit(deps, await callerOf(t.store, PRIVATE_KEY), message(['From: app@acme.test']), [
        'delivered@simulator.mailroom.test',
      ]);
      const captured = await submit(deps, await callerOf(t.store, TEST_MODE_KEY), message(['From: app@acme.test']), [
        'softbounce@simulator.mailroom.test',
      ]);
      const blobs = testBlobs(h.closer);
      const { worker } = h.worker(t, { blobs });
      await worker.runOnce();
      // softbounce@ asks for a retry; the first attempt captured the message (its one read).
      expect(reads.mock.calls).toEqual([[captured.messageId]]);
      t.clock.advance(60_000);
      await worker.runOnce();
      expect(reads.mock.calls).toEqual([[captured.messageId]]);
      expect((await t.store.messages.get('acme', captured.messageId))?.attempts).toBe(2);
      expect((await t.store.messages.get('acme', captured.messageId))?.status).toBe('delivered');
      expect((await t.store.messages.get('acme', simulated.messageId))?.status).toBe('delivered');
      expect((await blobs.get(inboxBlobKey('acme', captured.messageId))).length).toBeGreaterThan(0);
      expect(sink.received).toHaveLength(0);
    },
  );

  it.skipIf(skip)('a submitted message whose bytes are gone fails on its own', async () => {
    const t = await h.app();
    const sink = await h.sink(t);
    await seedSmtpOrg(t.store, smtpService(sink.port), { keys: KEYS });
    const deps = depsFor(t, h.closer);
    const { messageId } = await submit(deps, await callerOf(t.store, PRIVATE_KEY), message(BASIC_HEADERS));
    await databaseOf(t.store).updateTable('message_contents').set({ mime: null }).where('message_id', '=', messageId).execute();
    const { worker } = h.worker(t);
    await worker.runOnce();
    expect(sink.received).toHaveLength(0);
    const row = await t.store.messages.get('acme', messageId);
    expect(row?.status).toBe('failed');
    expect(row?.last_error).toMatch(/no stored bytes/);
  });
});
