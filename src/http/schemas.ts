import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_CATALOG, type ErrorCode } from '../errors/catalog.js';

/** `response` schemas of a route: its success shape plus the envelope for each error status. */
export function responses(success: Record<number, TSchema>, errors: readonly ErrorCode[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = { ...success };
  for (const code of errors) {
    const status = ERROR_CATALOG[code].status;
    out[status] ??= Type.Ref('ErrorEnvelope');
  }
  out[500] ??= Type.Ref('ErrorEnvelope');
  return out;
}

/** The refusals of every route that only a private key may call (reads, render, the test inbox). */
export const PRIVATE_KEY_ERRORS: readonly ErrorCode[] = [
  'unauthorized',
  'invalid_public_key',
  'invalid_private_key',
  'private_key_required',
  'private_key_in_browser',
];

export const Timestamp = Type.String({ format: 'date-time' });
