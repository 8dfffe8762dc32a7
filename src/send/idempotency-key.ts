import { createHash } from 'node:crypto';
import { ApiError } from '../errors/api-error.js';

const VALID = /^[A-Za-z0-9_\-:.]{1,255}$/;

/** The Idempotency-Key header: absent → undefined; present but malformed → 400 (spec rule 3). */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!VALID.test(value)) {
    throw new ApiError('invalid_idempotency_key', {
      details: { reason: value.length === 0 ? 'empty' : value.length > 255 ? 'too_long' : 'invalid_characters' },
    });
  }
  return value;
}

/** Digest of what makes two requests "the same": the endpoint and the body as parsed. */
export function requestDigest(endpoint: string, body: unknown): string {
  return createHash('sha256')
    .update(endpoint)
    .update('\n')
    .update(JSON.stringify(body) ?? '')
    .digest('hex');
}
