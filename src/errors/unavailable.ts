import type { StorageTrouble } from '../storage/availability.js';
import { RETRY_AFTER_SECONDS } from '../storage/health.js';
import { ApiError } from './api-error.js';

const MESSAGES: Readonly<Record<StorageTrouble, string>> = {
  database_unavailable: 'The database is unreachable for the moment; retry after the number of seconds in Retry-After (with the same Idempotency-Key, a send is never accepted twice).',
  storage_full: 'The storage is full and refuses writes for the moment; retry after the number of seconds in Retry-After (with the same Idempotency-Key, a send is never accepted twice).',
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
