import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { simpleParser } from 'mailparser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openBlobStore, type OpenedBlobs } from '../../src/blobs/index.js';
import { parseS3Url, s3BlobStore } from '../../src/blobs/s3.js';
import { LocalPacer } from '../../src/delivery/pacing.js';
import { DeliveryWorker } from '../../src/delivery/worker.js';
import { createMetrics } from '../../src/observability/metrics.js';
import type { App } from '../../src/http/app-types.js';
import { buildTestApp, testConfig } from '../support/app.js';
import { CONTACT_TEMPLATE, PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { contentRow, messageIds } from '../support/db.js';
import { freePort } from '../support/smtp-sink.js';
import { freshStore, type TestStore } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

const require = createRequire(import.meta.url);
const S3rver = require('s3rver') as new (
  options: Record<string, unknown>,
) => { run(): Promise<{ port: number }>; close(): Promise<void> };

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const PARAMS = { name: 'Ada', email: 'ada@example.com', message: 'See attached' };
const auth = { authorization: `Bearer ${PRIVATE_KEY}` };
const FILES = { template: { ...CONTACT_TEMPLATE, id: 'files', allow_attachments: true } };

interface Setup extends TestStore {
  app: App;
  dir: string;
  blobs: OpenedBlobs;
  deliver(): Promise<Array<{ filename?: string; content: Buffer }>>;
}

async function setup(
  dialect: 'sqlite' | 'postgres',
  blobs?: (dir: string) => OpenedBlobs,
  plan: 'free' | 'starter' | 'pro' = 'pro',
): Promise<Setup> {
  const ts = await freshStore(dialect);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-att-'));
  const config = testConfig({ MAILROOM_DATA_DIR: dir });
  const opened = blobs?.(dir) ?? openBlobStore({ blobUrl: undefined, dataDir: dir, baseUrl: config.baseUrl });
  await seedOrg(ts.store, { plan, templates: [CONTACT_TEMPLATE, FILES.template] });
  const app = await buildTestApp(config, { store: ts.store, clock: ts.clock, blobs: opened });
  await app.ready();
  const worker = new DeliveryWorker({
    store: ts.store,
    clock: ts.clock,
    dataDir: dir,
    pacer: new LocalPacer(ts.clock),
    metrics: createMetrics(),
    logger: quiet,
    blobs: opened.blobs,
  });
  return {
    ...ts,
    app,
    dir,
    blobs: opened,
    async deliver() {
      await worker.runOnce();
      const outbox = path.join(dir, 'outbox');
      const files = fs.readdirSync(outbox).filter((f) => f.endsWith('.eml'));
      const parsed = await simpleParser(fs.readFileSync(path.join(outbox, files[files.length - 1] ?? '')));
      return parsed.attachments.map((a) => ({ filename: a.filename, content: a.content }));
    },
    cleanup: async () => {
      await worker.stop(1000);
      await app.close();
      await ts.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const send = (s: Setup, attachments: unknown[], template = 'files', headers: Record<string, string> = auth) =>
  s.app.inject({
    method: 'POST',
    url: '/v1/send',
    headers,
    payload: { template_id: template, template_params: PARAMS, attachments },
  });

const inline = (filename: string, bytes: Buffer | string, content_type?: string) => ({
  filename,
  content_base64: Buffer.from(bytes).toString('base64'),
  ...(content_type !== undefined ? { content_type } : {}),
});

describeDialects('attachments on %s', (dialect, skip) => {
  let s: Setup | undefined;
  afterEach(async () => {
    await s?.cleanup();
    s = undefined;
  });

  it.skipIf(skip)('inline attachments are stored as blobs and delivered with the email, names cleaned', async () => {
    s = await setup(dialect);
    const res = await send(s, [
      inline('report\u202E.pdf.', '%PDF-1.7 hello', 'application/pdf'),
      inline('notes.txt', 'plain notes'),
    ]);
    expect(res.statusCode).toBe(202);
    const row = await contentRow(s.store);
    const refs = JSON.parse(row.attachments ?? '[]') as Array<{ blob_key: string; filename: string; size: number }>;
    expect(refs.map((r) => r.filename)).toEqual(['report.pdf', 'notes.txt']);
    expect(await s.blobs.blobs.size(refs[0]?.blob_key ?? '')).toBe(14);
    const delivered = await s.deliver();
    expect(delivered.map((a) => a.filename)).toEqual(['report.pdf', 'notes.txt']);
    expect(delivered[1]?.content.toString()).toBe('plain notes');
  });

  it.skipIf(skip)(
    'refusals: template without attachments, Free plan, blocked types by name and by content, too large',
    async () => {
      s = await setup(dialect);
      const code = async (res: Promise<{ statusCode: number; json(): unknown }>) => {
        const r = await res;
        const body = r.json() as { error: { code: string; details?: { reason?: string } } };
        return `${r.statusCode} ${body.error.code} ${body.error.details?.reason ?? ''}`.trim();
      };
      expect(await code(send(s, [inline('a.txt', 'x')], 'contact'))).toBe('403 attachments_not_allowed template');
      expect(await code(send(s, [inline('setup.exe', 'x')]))).toBe('403 attachments_not_allowed file_type');
      expect(await code(send(s, [inline('invoice.pdf.exe', 'x')]))).toBe('403 attachments_not_allowed file_type');
      expect(await code(send(s, [inline('holiday.jpg', Buffer.from('MZ\x90\x00payload', 'latin1'))]))).toBe(
        '403 attachments_not_allowed file_type',
      );
      expect(await code(send(s, [inline('page.txt', '<!DOCTYPE html><html><script>x</script></html>')]))).toBe(
        '403 attachments_not_allowed file_type',
      );
      expect(await code(send(s, [{ filename: 'x.txt', content_base64: '***not base64***' }]))).toBe('400 invalid_body');
      const big = Buffer.alloc(10 * 1024 * 1024 + 1, 0x41);
      expect(await code(send(s, [inline('big.txt', big)]))).toBe('413 attachment_too_large');
      expect(await messageIds(s.store)).toEqual([]);
      await s.cleanup();
      s = await setup(dialect, undefined, 'free');
      expect(await code(send(s, [inline('a.txt', 'x')]))).toBe('403 attachments_not_allowed plan');
    },
  );

  it.skipIf(skip)(
    'upload → PUT → send → delivered, on the disk store; the URL is good once, for its size, until it expires',
    async () => {
      s = await setup(dialect);
      const created = await s.app.inject({
        method: 'POST',
        url: '/v1/uploads',
        headers: auth,
        payload: { filename: 'data.csv', content_type: 'text/csv', size: 11 },
      });
      expect(created.statusCode).toBe(201);
      const up = created.json() as {
        upload_id: string;
        url: string;
        method: string;
        headers: Record<string, string>;
        expires_at: string;
      };
      expect(up.method).toBe('PUT');
      expect(up.headers['content-length']).toBe('11');
      expect(Date.parse(up.expires_at) - s.clock.now()).toBe(15 * 60_000);
      const target = new URL(up.url);
      const put = (body: string, url = `${target.pathname}${target.search}`) =>
        s!.app.inject({ method: 'PUT', url, headers: { 'content-type': 'text/csv' }, payload: body });
      expect((await put('a,b\n1,22\n123')).statusCode).toBe(400); // 12 bytes, not 11
      const tampered = new URL(up.url);
      tampered.searchParams.set('sig', 'A'.repeat(43));
      expect((await put('a,b\n1,2\n3,4', `${tampered.pathname}${tampered.search}`)).statusCode).toBe(403);
      // Sending before the bytes arrived is refused.
      expect((await send(s, [{ upload_id: up.upload_id }])).statusCode).toBe(400);
      expect((await put('a,b\n1,2\n3,4')).statusCode).toBe(200);
      expect((await put('a,b\n1,2\n3,4')).statusCode).toBe(409);
      const res = await send(s, [{ upload_id: up.upload_id }]);
      expect(res.statusCode).toBe(202);
      const delivered = await s.deliver();
      expect(delivered).toEqual([{ filename: 'data.csv', content: Buffer.from('a,b\n1,2\n3,4') }]);

      // An expired URL is refused.
      const late = (
        await s.app.inject({ method: 'POST', url: '/v1/uploads', headers: auth, payload: { filename: 'x.txt', size: 1 } })
      ).json() as { url: string };
      s.clock.advance(15 * 60_000 + 1);
      const lateUrl = new URL(late.url);
      expect((await put('x', `${lateUrl.pathname}${lateUrl.search}`)).statusCode).toBe(403);
    },
  );

  it.skipIf(skip)('uploads: blocked names, the plan limit, other organizations, and the public-key rules', async () => {
    s = await setup(dialect);
    const post = (payload: Record<string, unknown>, headers: Record<string, string> = auth) =>
      s!.app.inject({ method: 'POST', url: '/v1/uploads', headers, payload });
    expect((await post({ filename: 'x.exe', size: 5 })).json().error.code).toBe('attachments_not_allowed');
    expect((await post({ filename: 'x.txt', size: 10 * 1024 * 1024 + 1 })).json().error.code).toBe('attachment_too_large');
    expect((await post({ filename: 'x.txt', size: 0 })).json().error.code).toBe('invalid_body');
    // A public key (mobile apps are allowed in the seed) may upload while a template accepts files.
    const pub = { 'x-mail-public-key': PUBLIC_KEY };
    expect((await post({ filename: 'x.txt', size: 5 }, pub)).statusCode).toBe(201);
    // The daily public budget: 200 × the plan's limit.
    await s.store.uploads.insert({
      id: 'up_big',
      org_id: 'acme',
      filename: 'b',
      content_type: null,
      size: 200 * 10 * 1024 * 1024 - 5,
      blob_key: 'acme/up_big',
      key_type: 'public',
      created_at: s.clock.now(),
      url_expires_at: s.clock.now(),
      expires_at: s.clock.now() + 1000,
    });
    const over = await post({ filename: 'x.txt', size: 10 }, pub);
    expect(over.statusCode).toBe(429);
    expect(over.json().error.details.scope).toBe('uploadbytes');
    expect(over.headers['retry-after']).toBeDefined();
    // Another organization's upload cannot be referenced.
    await seedOrg(s.store, {
      id: 'other',
      keys: [{ type: 'private', key: 'sk_other_private_0001' }],
      templates: [FILES.template],
      plan: 'pro',
    });
    const theirs = (await post({ filename: 'y.txt', size: 1 }, { authorization: 'Bearer sk_other_private_0001' })).json() as {
      upload_id: string;
    };
    expect((await send(s, [{ upload_id: theirs.upload_id }])).json().error.code).toBe('invalid_body');
    // Without any template that accepts attachments, public keys may not upload.
    await s.store.templates.put(
      'acme',
      'files',
      { ...(await s.store.templates.get('acme', 'files'))!, allow_attachments: false },
      s.clock.now(),
    );
    expect((await post({ filename: 'x.txt', size: 5 }, pub)).json().error.code).toBe('attachments_not_allowed');
  });
});

describeDialects('a send on %s whose S3 blob store refuses connections', (dialect, skip) => {
  let s: Setup | undefined;
  afterEach(async () => {
    await s?.cleanup();
    s = undefined;
  });

  it.skipIf(skip)(
    "answers 503 blob_store_unavailable, not database_unavailable, and leaves the database's health alone",
    async () => {
      const port = await freePort();
      s = await setup(dialect, () => ({
        blobs: s3BlobStore(parseS3Url(`s3://mailroom-att?endpoint=http://127.0.0.1:${port}&access_key_id=K&secret_access_key=S`)),
        uploadSecret: undefined,
      }));
      const res = await send(s, [inline('a.txt', 'hello', 'text/plain')]);
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ error: { code: 'service_unavailable', details: { reason: 'blob_store_unavailable' } } });
      expect(res.headers['retry-after']).toBe('5');
      expect(s.store.health.current()).toBeUndefined();
      expect(await messageIds(s.store)).toEqual([]);
    },
  );
});

describe('uploads on the S3 store, against a real S3-protocol server', () => {
  let server: { run(): Promise<{ port: number }>; close(): Promise<void> };
  let port = 0;
  let s: Setup | undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-s3-'));
  beforeAll(async () => {
    server = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory: dir,
      configureBuckets: [{ name: 'mailroom-att' }],
    });
    ({ port } = await server.run());
  });
  afterAll(async () => {
    await s?.cleanup();
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('upload → PUT to S3 → send → delivered with the attachment', async () => {
    s = await setup('sqlite', () => ({
      blobs: s3BlobStore(
        parseS3Url(`s3://mailroom-att?endpoint=http://127.0.0.1:${port}&access_key_id=S3RVER&secret_access_key=S3RVER`),
      ),
      uploadSecret: undefined,
    }));
    const up = (
      await s.app.inject({
        method: 'POST',
        url: '/v1/uploads',
        headers: auth,
        payload: { filename: 'photo.png', content_type: 'image/png', size: 8 },
      })
    ).json() as { upload_id: string; url: string; headers: Record<string, string> };
    expect(new URL(up.url).port).toBe(String(port));
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const put = await fetch(up.url, { method: 'PUT', headers: up.headers, body: png });
    expect(put.status).toBe(200);
    expect((await send(s, [{ upload_id: up.upload_id }])).statusCode).toBe(202);
    const delivered = await s.deliver();
    expect(delivered).toEqual([{ filename: 'photo.png', content: png }]);
  });
});
