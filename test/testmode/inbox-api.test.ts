import { createHash } from 'node:crypto';
import { beforeEach, expect, it } from 'vitest';
import type { BlobStore } from '../../src/blobs/blob-store.js';
import { diskBlobStore } from '../../src/blobs/disk.js';
import type { InboxItem, InboxMessage as Detail } from '../../src/testmode/inbox.js';
import { buildTestApp, testConfig, type TestApp } from '../support/app.js';
import { admin } from '../support/admin.js';
import { closerPerTest, tempDir } from '../support/cleanup.js';
import { describeDialects } from '../support/dialects.js';
import { bearer, expectError } from '../support/http.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { freshStore } from '../support/stores.js';
import { captureMessage, insertModeMessage, type ModeMessage } from '../support/test-mode.js';

/**
 * The captured test inbox (issue 27 §4): GET /v1/test-inbox[/{id}[/raw]] with a private test key,
 * the admin API's …/test-inbox (and DELETE), filters and paging, the headers read from the
 * captured bytes, the raw download byte for byte, and every refusal in the error envelope.
 */

interface Page {
  items: InboxItem[];
  next_cursor: string | null;
}

const DAY = 86_400_000;

describeDialects('the test inbox on %s', (dialect, skip) => {
  const closer = closerPerTest();
  let t: TestApp;
  let blobs: BlobStore;
  let testKey: string;
  let testPublicKey: string;
  let otherTestKey: string;

  beforeEach(async () => {
    if (skip) return;
    const ts = await freshStore(dialect);
    closer.defer(() => ts.cleanup());
    blobs = diskBlobStore({ root: tempDir(closer, 'mailroom-inbox-'), baseUrl: 'http://mailroom.test', secret: 'blob-secret' });
    const config = testConfig();
    const app = await buildTestApp(config, { store: ts.store, clock: ts.clock, blobs: { blobs, uploadSecret: 'blob-secret' } });
    closer.defer(() => app.close());
    await app.ready();
    t = { ...ts, app, config };
    await seedOrg(t.store);
    await seedOrg(t.store, { id: 'other', keys: [{ type: 'private', key: 'sk_other_live_1' }] });
    const now = t.clock.now();
    testKey = (await t.store.keys.insert('acme', 'private', now, undefined, 'test')).value;
    testPublicKey = (await t.store.keys.insert('acme', 'public', now, undefined, 'test')).value;
    otherTestKey = (await t.store.keys.insert('other', 'private', now, undefined, 'test')).value;
  });

  /** A test message of acme, captured; returns its id and the composed bytes. */
  const captured = async (m: Partial<ModeMessage> & { to: string[] }, org = 'acme') => {
    const id = await insertModeMessage(t.store, blobs, { createdAt: t.clock.now(), mode: 'test', org, ...m });
    const bytes = await captureMessage(t.store, blobs, id, t.clock.now(), org);
    return { id, bytes };
  };
  const get = (url: string, key = testKey, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url, headers: { ...bearer(key), ...headers } });
  const page = async (query = '', key = testKey): Promise<Page> => {
    const res = await get(`/v1/test-inbox${query}`, key);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Page>();
  };
  const ids = (p: Page) => p.items.map((i) => i.message_id);

  it.skipIf(skip)('lists newest first with filters and a cursor that pages to the end', async () => {
    const a = await captured({ to: ['ada@example.org'], subject: 'Your 100% receipt' });
    t.clock.advance(1000);
    const b = await captured({ to: ['bob@example.org'], cc: ['carol@example.org'], template: 'welcome' });
    t.clock.advance(1000);
    const c = await captured({ to: ['dan@example.org'], bcc: ['Eve@Example.org'] });
    // A live message of the same organization, and another organization's test message: never listed.
    await insertModeMessage(t.store, blobs, { to: ['ada@example.org'], createdAt: t.clock.now() });
    await captured({ to: ['ada@example.org'] }, 'other');

    const first = await page('?limit=2');
    expect(ids(first)).toEqual([c.id, b.id]);
    expect(first.next_cursor).not.toBeNull();
    const second = await page(`?limit=2&cursor=${first.next_cursor}`);
    expect(ids(second)).toEqual([a.id]);
    expect(second.next_cursor).toBeNull();
    expect(first.items[0]).toEqual({
      message_id: c.id,
      template_id: 'contact',
      subject: 'Welcome aboard',
      from: 'noreply@acme.test',
      to: ['dan@example.org'],
      cc: [],
      bcc: ['Eve@Example.org'],
      created_at: new Date(t.clock.now()).toISOString(),
      size: c.bytes.length,
      status: 'queued',
      mode: 'test',
    });

    expect(ids(await page('?to=carol@example.org'))).toEqual([b.id]);
    expect(ids(await page('?to=EVE@example.org'))).toEqual([c.id]);
    expect(ids(await page('?template_id=welcome'))).toEqual([b.id]);
    // `%` matches itself, not anything.
    expect(ids(await page(`?q=${encodeURIComponent('100%')}`))).toEqual([a.id]);
    expect(ids(await page(`?q=${encodeURIComponent('1%0')}`))).toEqual([]);
    expect(ids(await page('?q=RECEIPT'))).toEqual([a.id]);
    expect(ids(await page('?q=dan@'))).toEqual([c.id]);

    expectError(await get('/v1/test-inbox?cursor=nonsense'), 400, 'invalid_body');
    expectError(await get(`/v1/test-inbox?q=${encodeURIComponent('a\u0000b')}`), 400, 'invalid_body');
    expectError(await get('/v1/test-inbox?limit=0'), 400, 'invalid_body');
  });

  it.skipIf(skip)('shows a message with the headers as captured, its bodies and attachments', async () => {
    const content = Buffer.from('%PDF-1.4 not really\n');
    const { id, bytes } = await captured({
      to: ['ada@example.org'],
      cc: ['carol@example.org'],
      bcc: ['hidden@example.org'],
      subject: 'Grüße',
      attachment: { filename: 'invoice.pdf', contentType: 'application/pdf', content },
    });
    const res = await get(`/v1/test-inbox/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    const detail = res.json<Detail>();
    const header = (name: string) => detail.headers.find((h) => h.name.toLowerCase() === name)?.value;
    const stored = await t.store.messages.get('acme', id);
    expect(header('subject')).toBe('Grüße');
    expect(header('message-id')).toBe(stored?.header_message_id);
    expect(header('cc')).toBe('carol@example.org');
    expect(header('bcc')).toBeUndefined();
    expect(detail.bcc).toEqual(['hidden@example.org']);
    expect(detail.html).toBe('<p>Hello <b>there</b></p>');
    expect(detail.text).toBe('Hello there');
    expect(detail.attachments).toEqual([{ filename: 'invoice.pdf', content_type: 'application/pdf', size: content.length }]);
    expect(detail.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(bytes.toString('latin1')).toContain('invoice.pdf');
  });

  it.skipIf(skip)('downloads the captured bytes unchanged, with their digest as the ETag', async () => {
    const { id, bytes } = await captured({ to: ['ada@example.org'], bcc: ['hidden@example.org'] });
    const res = await get(`/v1/test-inbox/${id}/raw`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('message/rfc822');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${id}.eml"`);
    const etag = `"${createHash('sha256').update(bytes).digest('hex')}"`;
    expect(res.headers.etag).toBe(etag);
    expect(res.rawPayload.equals(bytes)).toBe(true);
    expect(res.rawPayload.toString('latin1')).not.toMatch(/^bcc:/im);
    const again = await get(`/v1/test-inbox/${id}/raw`, testKey, { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
  });

  it.skipIf(skip)('is read with a private test key only; anything else is refused in the envelope', async () => {
    const { id } = await captured({ to: ['ada@example.org'] });
    for (const url of ['/v1/test-inbox', `/v1/test-inbox/${id}`, `/v1/test-inbox/${id}/raw`]) {
      const live = expectError(await get(url, PRIVATE_KEY), 403, 'forbidden');
      expect(live.details).toEqual({ reason: 'live_key' });
      expect(live.message).toContain('sk_test_');
      const publicKey = await t.app.inject({ method: 'GET', url, headers: { 'x-mail-public-key': testPublicKey } });
      expectError(publicKey, 403, 'private_key_required');
      expectError(await t.app.inject({ method: 'GET', url }), 401, 'unauthorized');
      const browser = await get(url, testKey, { origin: 'https://example.com' });
      expectError(browser, 403, 'private_key_in_browser');
    }
    // Another organization's test key, a live message, an id no message has: all look missing.
    expectError(await get(`/v1/test-inbox/${id}`, otherTestKey), 404, 'message_not_found');
    expectError(await get(`/v1/test-inbox/${id}/raw`, otherTestKey), 404, 'message_not_found');
    const live = await insertModeMessage(t.store, blobs, { to: ['ada@example.org'], createdAt: t.clock.now() });
    expectError(await get(`/v1/test-inbox/${live}`), 404, 'message_not_found');
    expectError(await get('/v1/test-inbox/msg_nope'), 404, 'message_not_found');
    expectError(await get('/v1/test-inbox/not-an-id/raw'), 404, 'message_not_found');
  });

  it.skipIf(skip)('keeps nothing past test retention, purged yet or not', async () => {
    const { id } = await captured({ to: ['ada@example.org'] });
    t.clock.advance(7 * DAY);
    expect(ids(await page())).toEqual([id]);
    expect((await get(`/v1/test-inbox/${id}`)).statusCode).toBe(200);
    t.clock.advance(1);
    expect(ids(await page())).toEqual([]);
    expectError(await get(`/v1/test-inbox/${id}`), 404, 'message_not_found');
    expectError(await get(`/v1/test-inbox/${id}/raw`), 404, 'message_not_found');
    expectError(await admin(t, 'GET', `/organizations/acme/test-inbox/${id}`), 404, 'message_not_found');
  });

  it.skipIf(skip)('the admin API lists, shows, downloads and empties it; the messages stay', async () => {
    const one = await captured({ to: ['ada@example.org'] });
    t.clock.advance(1);
    const two = await captured({ to: ['bob@example.org'], bcc: ['hidden@example.org'] });
    const other = await captured({ to: ['ada@example.org'] }, 'other');

    const list = await admin(t, 'GET', '/organizations/acme/test-inbox?limit=1');
    expect(list.statusCode, list.body).toBe(200);
    expect(ids(list.json<Page>())).toEqual([two.id]);
    const detail = await admin(t, 'GET', `/organizations/acme/test-inbox/${one.id}`);
    expect(detail.json<Detail>().message_id).toBe(one.id);
    const raw = await admin(t, 'GET', `/organizations/acme/test-inbox/${two.id}/raw`);
    expect(raw.headers['content-type']).toBe('message/rfc822');
    expect(raw.rawPayload.equals(two.bytes)).toBe(true);
    expectError(await admin(t, 'GET', `/organizations/other/test-inbox/${one.id}`), 404, 'message_not_found');
    expectError(await admin(t, 'GET', '/organizations/nobody/test-inbox'), 404, 'not_found');
    expectError(await admin(t, 'GET', '/organizations/acme/test-inbox', undefined, null), 401, 'unauthorized');

    const emptied = await admin(t, 'DELETE', '/organizations/acme/test-inbox');
    expect(emptied.statusCode, emptied.body).toBe(204);
    expect(ids(await page())).toEqual([]);
    for (const id of [one.id, two.id]) {
      await expect(blobs.get(`acme/eml_${id}`)).rejects.toThrow();
      expect(await t.store.testInbox.has(id)).toBe(false);
      expect((await t.store.messages.get('acme', id))?.mode).toBe('test');
    }
    // Another organization's inbox is untouched.
    expect(await t.store.testInbox.has(other.id)).toBe(true);
    expect((await blobs.get(`other/eml_${other.id}`)).equals(other.bytes)).toBe(true);
  });
});
