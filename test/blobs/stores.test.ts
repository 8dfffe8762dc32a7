import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlobStore } from '../../src/blobs/blob-store.js';
import { diskBlobStore } from '../../src/blobs/disk.js';
import { parseS3Url, s3BlobStore } from '../../src/blobs/s3.js';
import { verifyUpload } from '../../src/blobs/signing.js';

// s3rver: a real S3-protocol server on loopback (CommonJS, no types).
const require = createRequire(import.meta.url);
const S3rver = require('s3rver') as new (
  options: Record<string, unknown>,
) => { run(): Promise<{ port: number }>; close(): Promise<void> };

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-blobs-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function behaves(name: string, make: () => Promise<BlobStore>): void {
  describe(`${name} blob store`, () => {
    let store: BlobStore;
    beforeAll(async () => {
      store = await make();
    });

    it('stores, measures, reads and deletes', async () => {
      const key = `acme/up_${Date.now()}`;
      expect(await store.size(key)).toBeUndefined();
      await store.put(key, Buffer.from('hello world'), 'text/plain');
      expect(await store.size(key)).toBe(11);
      expect((await store.get(key)).toString()).toBe('hello world');
      await store.delete(key);
      expect(await store.size(key)).toBeUndefined();
    });

    it('presigns a PUT with the exact size and type to send', async () => {
      const put = await store.presignPut('acme/up_presign', 5, 'text/plain', { at: Date.now() + 15 * 60_000, inMs: 15 * 60_000 });
      expect(put.method).toBe('PUT');
      expect(put.headers).toEqual({ 'content-type': 'text/plain', 'content-length': '5' });
      expect(() => new URL(put.url)).not.toThrow();
    });
  });
}

behaves('disk', async () => diskBlobStore({ root: tmp(), baseUrl: 'http://mailroom.test', secret: 's3cret' }));

describe('disk store URLs', () => {
  it('sign the blob, size, type and expiry', async () => {
    const store = diskBlobStore({ root: tmp(), baseUrl: 'http://mailroom.test', secret: 's3cret' });
    const expires = Date.UTC(2030, 0, 1);
    const put = await store.presignPut('acme/up_abc', 42, 'image/png', { at: expires, inMs: 60_000 });
    const url = new URL(put.url);
    expect(url.pathname).toBe('/v1/uploads/up_abc/content');
    const sig = url.searchParams.get('sig') ?? '';
    expect(verifyUpload('s3cret', 'acme/up_abc', 42, 'image/png', expires, sig)).toBe(true);
    expect(verifyUpload('s3cret', 'acme/up_abc', 43, 'image/png', expires, sig)).toBe(false);
    expect(verifyUpload('s3cret', 'acme/up_abc', 42, 'text/html', expires, sig)).toBe(false);
    expect(verifyUpload('s3cret', 'acme/up_abc', 42, 'image/png', expires + 1, sig)).toBe(false);
    expect(verifyUpload('other', 'acme/up_abc', 42, 'image/png', expires, sig)).toBe(false);
  });

  it('refuses a second write and keys that could escape the directory', async () => {
    const store = diskBlobStore({ root: tmp(), baseUrl: 'http://mailroom.test', secret: 's' });
    await store.put('acme/up_once', Buffer.from('a'), undefined);
    await expect(store.put('acme/up_once', Buffer.from('b'), undefined)).rejects.toThrow();
    expect((await store.get('acme/up_once')).toString()).toBe('a');
    await expect(store.put('../etc/passwd', Buffer.from('x'), undefined)).rejects.toThrow(/invalid blob key/);
    await expect(store.get('acme/../../x')).rejects.toThrow(/invalid blob key/);
  });
});

describe('S3 store against a real S3-protocol server', () => {
  let server: { run(): Promise<{ port: number }>; close(): Promise<void> };
  let port = 0;
  beforeAll(async () => {
    server = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory: tmp(),
      configureBuckets: [{ name: 'mailroom-test' }],
    });
    ({ port } = await server.run());
  });
  afterAll(async () => server.close());

  behaves('s3', async () =>
    s3BlobStore(
      parseS3Url(`s3://mailroom-test/blobs?endpoint=http://127.0.0.1:${port}&access_key_id=S3RVER&secret_access_key=S3RVER`),
    ),
  );

  it('accepts a PUT to its presigned URL with the given headers', async () => {
    const store = s3BlobStore(
      parseS3Url(`s3://mailroom-test?endpoint=http://127.0.0.1:${port}&access_key_id=S3RVER&secret_access_key=S3RVER`),
    );
    const put = await store.presignPut('acme/up_put', 5, 'text/plain', { at: Date.now() + 60_000, inMs: 60_000 });
    const res = await fetch(put.url, { method: 'PUT', headers: put.headers, body: 'hello' });
    expect(res.status).toBe(200);
    expect(await store.size('acme/up_put')).toBe(5);
    expect((await store.get('acme/up_put')).toString()).toBe('hello');
  });

  it('parses s3:// URLs', () => {
    expect(parseS3Url('s3://bucket/a/b/?endpoint=http://127.0.0.1:9000&region=eu-west-1')).toEqual({
      bucket: 'bucket',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
      credentials: undefined,
      prefix: 'a/b',
    });
    expect(() => parseS3Url('http://bucket')).toThrow(/s3:\/\//);
  });
});
