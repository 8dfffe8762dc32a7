import { createRequire } from 'node:module';
import type { BlobStore, PresignedPut } from './blob-store.js';

const require = createRequire(import.meta.url);

export interface S3Options {
  bucket: string;
  /** S3-compatible endpoint (MinIO, R2, …); absent: AWS. */
  endpoint?: string | undefined;
  region: string;
  forcePathStyle: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string } | undefined;
  /** Key prefix inside the bucket. */
  prefix: string;
}

/**
 * `s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1&path_style=true`.
 * Credentials come from the AWS SDK's usual chain (AWS_ACCESS_KEY_ID, …) unless the URL
 * carries `access_key_id`/`secret_access_key` (for local S3-compatible servers).
 */
export function parseS3Url(url: string): S3Options {
  const u = new URL(url);
  if (u.protocol !== 's3:' || u.hostname === '')
    throw new Error('MAILROOM_BLOB_URL must look like s3://bucket[/prefix]?endpoint=…');
  const q = u.searchParams;
  const accessKeyId = q.get('access_key_id');
  const secretAccessKey = q.get('secret_access_key');
  return {
    bucket: u.hostname,
    endpoint: q.get('endpoint') ?? undefined,
    region: q.get('region') ?? 'us-east-1',
    forcePathStyle: q.get('path_style') !== 'false' && q.get('endpoint') !== null,
    credentials: accessKeyId !== null && secretAccessKey !== null ? { accessKeyId, secretAccessKey } : undefined,
    prefix: u.pathname.replace(/^\/+|\/+$/g, ''),
  };
}

/**
 * Blobs in an S3 bucket. The upload URL is S3's own presigned PUT with the exact
 * Content-Length and Content-Type signed in; the size is checked again when the upload is
 * used, since not every S3-compatible server enforces signed headers.
 */
export function s3BlobStore(options: S3Options): BlobStore {
  // Loaded here, not imported: the S3 client and presigner are ~6 MB of heap (and ~30 MB of
  // RSS in a fresh process) that a server keeping its files on disk never uses. Both ship
  // CommonJS as their `main`, which is what an `import` of them loads too.
  const { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } =
    require('@aws-sdk/client-s3') as typeof import('@aws-sdk/client-s3');
  const { getSignedUrl } = require('@aws-sdk/s3-request-presigner') as typeof import('@aws-sdk/s3-request-presigner');
  const client = new S3Client({
    region: options.region,
    forcePathStyle: options.forcePathStyle,
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
  });
  const objectKey = (key: string) => (options.prefix === '' ? key : `${options.prefix}/${key}`);
  const Bucket = options.bucket;
  return {
    async presignPut(key, size, contentType, expiry): Promise<PresignedPut> {
      const type = contentType ?? 'application/octet-stream';
      const expiresIn = Math.max(1, Math.floor(expiry.inMs / 1000));
      const url = await getSignedUrl(
        client,
        new PutObjectCommand({ Bucket, Key: objectKey(key), ContentLength: size, ContentType: type }),
        {
          expiresIn,
          signableHeaders: new Set(['content-length', 'content-type']),
        },
      );
      return { url, method: 'PUT', headers: { 'content-type': type, 'content-length': String(size) } };
    },
    async size(key) {
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket, Key: objectKey(key) }));
        return head.ContentLength;
      } catch (err) {
        if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
        throw err;
      }
    },
    async put(key, bytes, contentType) {
      await client.send(
        new PutObjectCommand({
          Bucket,
          Key: objectKey(key),
          Body: bytes,
          ContentType: contentType ?? 'application/octet-stream',
        }),
      );
    },
    async get(key) {
      const out = await client.send(new GetObjectCommand({ Bucket, Key: objectKey(key) }));
      if (out.Body === undefined) throw new Error(`blob ${key} has no body`);
      return Buffer.from(await out.Body.transformToByteArray());
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: objectKey(key) }));
    },
  };
}
