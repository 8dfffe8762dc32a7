import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { PRIVATE_KEY } from './seed.js';

/** The spec's error envelope, with the `details` shapes tests look into. */
export interface ErrorBody {
  error: {
    code: string;
    message: string;
    docs_url: string;
    details?: Record<string, unknown> & {
      fields?: Array<{ field: string; message: string }>;
      issues?: Array<{ param: string; code: string; message: string }>;
      reason?: string;
    };
  };
}

/** The Send accepted response. */
export interface Accepted {
  message_id: string;
  status: 'queued' | 'held';
  status_token: string;
}

export const bearer = (key: string = PRIVATE_KEY): Record<string, string> => ({ authorization: `Bearer ${key}` });

/** Asserts status, JSON content type, the envelope's code and a message; returns the error object. */
export function expectError(res: LightMyRequestResponse, status: number, code: string): ErrorBody['error'] {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  const body = res.json<ErrorBody>();
  expect(body.error.code, res.body).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(0);
  return body.error;
}

/** Asserts a 202 with the Send accepted response and matching X-Mail-* headers; returns the body. */
export function expectAccepted(res: LightMyRequestResponse, status: Accepted['status'] = 'queued'): Accepted {
  expect(res.statusCode, res.body).toBe(202);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  const body = res.json<Accepted>();
  expect(body.status).toBe(status);
  expect(typeof body.message_id).toBe('string');
  expect(body.message_id.length).toBeGreaterThan(0);
  expect(typeof body.status_token).toBe('string');
  expect(body.status_token.length).toBeGreaterThan(0);
  expect(res.headers['x-mail-message-id']).toBe(body.message_id);
  expect(res.headers['x-mail-status']).toBe(body.status);
  return body;
}

/** Asserts a 400 invalid_body whose `details.fields` names `field`. */
export function expectInvalidField(res: LightMyRequestResponse, field: string): void {
  const err = expectError(res, 400, 'invalid_body');
  expect(
    (err.details?.fields ?? []).map((f) => f.field),
    res.body,
  ).toContain(field);
}

/** A 429 `rate_limited` with a numeric Retry-After header and `details.scope`; returns Retry-After. */
export function expectLimited(res: LightMyRequestResponse, scope: string): number {
  const err = expectError(res, 429, 'rate_limited');
  expect(err.details?.scope, res.body).toBe(scope);
  const retryAfter = String(res.headers['retry-after'] ?? '');
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  return Number(retryAfter);
}
