import fs from 'node:fs';
import path from 'node:path';
import { randomToken } from '../domain/ids.js';
import type { BlobStore } from './blob-store.js';
import { diskBlobStore } from './disk.js';
import { parseS3Url, s3BlobStore } from './s3.js';

export type { BlobStore } from './blob-store.js';

export interface OpenedBlobs {
  blobs: BlobStore;
  /** The disk store's URL-signing secret; undefined for S3, whose URLs S3 signs. */
  uploadSecret: string | undefined;
}

/**
 * `MAILROOM_BLOB_URL` unset: files under `<data_dir>/blobs/`, with upload URLs signed by a
 * secret kept in `<data_dir>/upload-secret` (made on first use, so every process on the
 * machine shares it). `s3://bucket…`: an S3-compatible bucket.
 */
export function openBlobStore(options: { blobUrl: string | undefined; dataDir: string; baseUrl: string }): OpenedBlobs {
  if (options.blobUrl !== undefined) return { blobs: s3BlobStore(parseS3Url(options.blobUrl)), uploadSecret: undefined };
  fs.mkdirSync(options.dataDir, { recursive: true });
  const secretFile = path.join(options.dataDir, 'upload-secret');
  try {
    fs.writeFileSync(secretFile, randomToken(32), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const uploadSecret = fs.readFileSync(secretFile, 'utf8').trim();
  return {
    blobs: diskBlobStore({ root: path.join(options.dataDir, 'blobs'), baseUrl: options.baseUrl, secret: uploadSecret }),
    uploadSecret,
  };
}
