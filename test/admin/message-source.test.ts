import { createHash } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { beforeEach, expect, it } from 'vitest';
import type { BlobStore } from '../../src/blobs/blob-store.js';
import { diskBlobStore } from '../../src/blobs/disk.js';
import { parseHeaders } from '../../src/testmode/inbox-view.js';
import { admin } from '../support/admin.js';
import { ADMIN_TOKEN, buildTestApp, testConfig, type TestApp } from '../support/app.js';
import { closerPerTest, tempDir } from '../support/cleanup.js';
import { databaseOf, deleteContent } from '../support/db.js';
import { newWorker, seedSmtpOrg, send, smtpService } from '../support/delivery.js';
import { describeDialects } from '../support/dialects.js';
import { expectError } from '../support/http.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { startSink, type Sink } from '../support/smtp-sink.js';
import { freshStore } from '../support/stores.js';
import { BASIC_HEADERS, callerOf, depsFor, message, submit } from '../support/submission.js';
import { captureMessage, insertModeMessage } from '../support/test-mode.js';

/**
 * The admin API's raw source of a message (issue 29, message detail): …/messages/{id}/raw is the
 * message as composed for an SMTP relay, and …/source its header fields and first 256 KiB. An
 * API-sent message composes to what the relay received (the same fields, Message-ID and bodies); a
 * submitted one is the delivered bytes exactly; a test message the captured bytes; anything that
 * cannot be had is a 404 in the envelope, never a 500.
 */

const PM_EVENTS = { source: 'postmark' as const, username: 'hook', password: 'pm-secret-password' };
const DAY = 86_400_000;

interface Source {
  origin: string;
  size: number;
  sha256: string;
  headers: Array<{ name: string; value: string }>;
  text: string;
  truncated: boolean;
}

describeDialects('a message as composed, in the admin API on %s', (dialect, skip) => {
  const closer = closerPerTest();
  let t: TestApp;
  let blobs: BlobStore;
  let sink: Sink;

  beforeEach(async () => {
    if (skip) return;
    const ts = await freshStore(dialect);
    closer.defer(() => ts.cleanup());
    blobs = diskBlobStore({ root: tempDir(closer, 'mailroom-source-'), baseUrl: 'http://mailroom.test', secret: 'blob-secret' });
    const config = testConfig();
    const app = await buildTestApp(config, { store: ts.store, clock: ts.clock, blobs: { blobs, uploadSecret: 'blob-secret' } });
    closer.defer(() => app.close());
    await app.ready();
    t = { ...ts, app, config };
    sink = await startSink({ clock: t.clock }, closer);
    await seedSmtpOrg(t.store, smtpService(sink.port, { events: PM_EVENTS }));
    await seedOrg(t.store, { id: 'other', keys: [{ type: 'private', key: 'sk_other_live_1' }] });
  });

  const deliver = async () => {
    const { worker } = newWorker({ store: t.store, clock: t.clock, dataDir: tempDir(closer), blobs }, closer);
    await worker.runOnce();
  };
  const raw = (id: string, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'GET',
      url: `/admin/v1/organizations/acme/messages/${id}/raw`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers },
    });
  const source = async (id: string): Promise<Source> => {
    const res = await admin(t, 'GET', `/organizations/acme/messages/${id}/source`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Source>();
  };

  it.skipIf(skip)('an API-sent message composes to what the relay received: its fields, Message-ID and bodies', async () => {
    const id = await send(t);
    await deliver();
    expect(sink.received).toHaveLength(1);
    const delivered = sink.received[0]?.raw ?? Buffer.alloc(0);
    const stored = await t.store.messages.get('acme', id);

    const res = await raw(id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('message/rfc822');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${id}.eml"`);
    const bytes = res.rawPayload;
    expect(res.headers.etag).toBe(`"${createHash('sha256').update(bytes).digest('hex')}"`);

    const [mine, theirs] = await Promise.all([simpleParser(bytes), simpleParser(delivered)]);
    expect(mine.messageId).toBe(stored?.header_message_id);
    expect(mine.messageId).toBe(theirs.messageId);
    expect(mine.subject).toBe(theirs.subject);
    expect(mine.subject).toBe('Message from Ada Lovelace');
    expect(mine.html).toBe(theirs.html);
    expect(mine.text).toBe(theirs.text);
    for (const field of ['from', 'to', 'cc', 'reply-to', 'x-pm-metadata-mailroom_message_id', 'mime-version'])
      expect(mine.headers.get(field), field).toEqual(theirs.headers.get(field));
    // The same header fields in the same order as the relay got them (Date and boundaries are of their run).
    const names = (b: Buffer) => parseHeaders(b).map((h) => h.name.toLowerCase());
    expect(names(bytes)).toEqual(names(delivered));
    expect(bytes.toString('latin1')).not.toMatch(/^bcc:/im);
    expect(mine.date?.getTime()).toBe(Math.floor((stored?.sent_at ?? 0) / 1000) * 1000);

    // Composed the same way every time: the same bytes, so the ETag holds.
    const again = await raw(id);
    expect(again.rawPayload.equals(bytes)).toBe(true);
    expect((await raw(id, { 'if-none-match': String(res.headers.etag) })).statusCode).toBe(304);

    const s = await source(id);
    expect(s).toMatchObject({ origin: 'composed', size: bytes.length, truncated: false, text: bytes.toString('utf8') });
    expect(s.headers.find((h) => h.name === 'Message-ID')?.value).toBe(stored?.header_message_id);
    expect(s.headers.find((h) => h.name === 'Subject')?.value).toBe('Message from Ada Lovelace');
  });

  it.skipIf(skip)('a message submitted over SMTP is the bytes the relay received, tracking header included', async () => {
    const mime = message([...BASIC_HEADERS, 'Bcc: hidden@example.net', 'X-Mailroom-Service: smtp'], 'Hello from SMTP.\r\n');
    const deps = depsFor(t, closer);
    const { messageId } = await submit(deps, await callerOf(t.store, PRIVATE_KEY), mime, ['ann@example.com']);
    await deliver();
    expect(sink.received).toHaveLength(1);
    const res = await raw(messageId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.rawPayload.toString('latin1')).toBe(sink.received[0]?.raw.toString('latin1'));
    expect(res.rawPayload.toString('latin1')).not.toMatch(/^(bcc|x-mailroom-service):/im);
    expect((await source(messageId)).origin).toBe('submitted');
  });

  it.skipIf(skip)('a test message: composed as the sandbox would until captured, then the captured bytes exactly', async () => {
    const id = await insertModeMessage(t.store, blobs, {
      to: ['ada@example.org'],
      bcc: ['hid@example.org'],
      mode: 'test',
      createdAt: t.clock.now(),
    });
    const before = await raw(id);
    expect(before.statusCode, before.body).toBe(200);
    expect((await simpleParser(before.rawPayload)).messageId).toBe(`<${id}@mailroom.test>`);
    expect(before.rawPayload.toString('latin1')).not.toMatch(/^(bcc|x-pm-metadata)/im);
    expect((await source(id)).origin).toBe('composed');

    const captured = await captureMessage(t.store, blobs, id, t.clock.now());
    const after = await raw(id);
    expect(after.rawPayload.equals(captured)).toBe(true);
    expect(after.headers.etag).toBe(`"${createHash('sha256').update(captured).digest('hex')}"`);
    expect(await source(id)).toMatchObject({ origin: 'captured', size: captured.length });
  });

  it.skipIf(skip)('attachments are composed in; a long message shows its first 256 KiB and says it is cut', async () => {
    const content = Buffer.alloc(300 * 1024, 'a');
    const id = await insertModeMessage(t.store, blobs, {
      createdAt: t.clock.now(),
      attachment: { filename: 'big.txt', contentType: 'text/plain', content },
    });
    const res = await raw(id);
    const parsed = await simpleParser(res.rawPayload);
    expect(parsed.attachments.map((a) => [a.filename, a.content.length])).toEqual([['big.txt', content.length]]);
    const s = await source(id);
    expect(s.truncated).toBe(true);
    expect(s.size).toBe(res.rawPayload.length);
    expect(Buffer.byteLength(s.text)).toBe(256 * 1024);
  });

  it.skipIf(skip)('404 in the envelope: unknown, another organization, past retention, content gone or unreadable', async () => {
    const id = await send(t);
    for (const path of ['raw', 'source']) {
      expectError(await admin(t, 'GET', `/organizations/other/messages/${id}/${path}`), 404, 'message_not_found');
      expectError(await admin(t, 'GET', `/organizations/acme/messages/msg_nope/${path}`), 404, 'message_not_found');
      expectError(await admin(t, 'GET', `/organizations/acme/messages/not%20an%20id/${path}`), 404, 'message_not_found');
      expectError(await admin(t, 'GET', `/organizations/nobody/messages/${id}/${path}`), 404, 'not_found');
      expectError(await admin(t, 'GET', `/organizations/acme/messages/${id}/${path}`, undefined, null), 401, 'unauthorized');
    }

    const withFile = await insertModeMessage(t.store, blobs, {
      createdAt: t.clock.now(),
      attachment: { filename: 'a.pdf', contentType: 'application/pdf', content: Buffer.from('%PDF-1.4') },
    });
    await blobs.delete(`acme/att_${withFile}`);
    const missing = expectError(await raw(withFile), 404, 'message_not_found');
    expect(missing.details).toEqual({ reason: 'content_unavailable' });
    expect(missing.message).toContain('a.pdf');

    await databaseOf(t.store)
      .updateTable('message_contents')
      .set({ content: '{"subject": 1' })
      .where('message_id', '=', id)
      .execute();
    const damaged = expectError(await admin(t, 'GET', `/organizations/acme/messages/${id}/source`), 404, 'message_not_found');
    expect(damaged.details).toEqual({ reason: 'content_unavailable' });
    await deleteContent(t.store, id);
    expect(expectError(await raw(id), 404, 'message_not_found').message).toContain('no longer stored');

    const later = await send(t);
    t.clock.advance((t.config.retentionDays + 1) * DAY);
    expectError(await raw(later), 404, 'message_not_found');
  });
});
