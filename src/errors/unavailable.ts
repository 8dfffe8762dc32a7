import type { StorageTrouble } from './storage-trouble.js';
import { ApiError } from './api-error.js';

/**
 * How long to wait before asking again, in whole seconds (the `Retry-After` of a 503). A
 * restart or a managed failover takes seconds (the pg-restart drill: the API accepted again
 * within ~1-3 s of the server being back), so clients come back soon; a full disk needs
 * someone to free space, so asking every few seconds only adds load.
 */
export const RETRY_AFTER_SECONDS: Readonly<Record<StorageTrouble, number>> = { database_unavailable: 5, storage_full: 30 };

const MESSAGES: Readonly<Record<StorageTrouble, string>> = {
  database_unavailable:
    'The database is unreachable for the moment; retry after the number of seconds ' +
    'in Retry-After (with the same Idempotency-Key, a send is never accepted twice).',
  storage_full:
    'The storage is full and refuses writes for the moment; retry after the number of ' +
    'seconds in Retry-After (with the same Idempotency-Key, a send is never accepted twice).',
};

/**
 * The answer to a request that met storage trouble: `503 service_unavailable`, `Retry-After`,
 * and `details.reason` naming the kind (`database_unavailable` or `storage_full`).
 */
export function unavailableError(kind: StorageTrouble, details: Record<string, unknown> = {}): ApiError {
  return new ApiError('service_unavailable', {
    message: MESSAGES[kind],
    details: { reason: kind, ...details },
    headers: { 'retry-after': String(RETRY_AFTER_SECONDS[kind]) },
  });
}

/**
 * The attachment store (S3 or the data dir's blobs) did not take a send's file: a refused or
 * dropped connection, an S3 error, a full disk under the blob directory. Not the database's
 * trouble (storage-trouble.ts counts only errors marked as the database's), so the health and
 * the worker are untouched; the send is not accepted and may be retried as it is.
 */
export function blobStoreUnavailable(cause: unknown): ApiError {
  return new ApiError('service_unavailable', {
    message:
      'The attachment store did not take the file for the moment; retry after the number of ' +
      'seconds in Retry-After (with the same Idempotency-Key, a send is never accepted twice).',
    details: { reason: 'blob_store_unavailable' },
    headers: { 'retry-after': '5' },
    cause,
  });
}
