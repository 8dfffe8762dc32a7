import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { bearer, type Accepted } from './http.js';

/**
 * Requests of the send-path tests: bodies for the seeded `contact` template and the POSTs that
 * carry them. Assertions on the answers live in ./http.ts, reads of what was stored in ./stored.ts.
 */

/** Parameters the seeded `contact` template accepts (the send and credit tests check "Ada"). */
export const PARAMS = { name: 'Ada', email: 'ada@example.org', message: 'Hello there' } as const;

/** The same template's parameters as the keys, lists and history tests send them (they check "Ann"). */
export const CONTACT_PARAMS = { name: 'Ann', email: 'ann@example.com', message: 'Hello there' };

/** A valid Send request for the seeded organization; `overrides` replaces top-level fields. */
export function sendBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { template_id: 'contact', template_params: { ...PARAMS }, ...overrides };
}

/**
 * POST a send call. `payload` is sent as JSON unless it is a string (then as is, with whatever
 * content type `headers` give). Headers default to the private key.
 */
export function post(
  t: TestApp,
  payload: unknown,
  headers: Record<string, string> = bearer(),
  url = '/v1/send',
): Promise<LightMyRequestResponse> {
  const options: InjectOptions = { method: 'POST', url, headers };
  options.payload = payload as InjectOptions['payload'];
  return t.app.inject(options);
}

/**
 * One request. A 429 is never what the callers are about, so a rate-limited request is retried
 * after moving the app's clock past `Retry-After`: the memory limiter counts on that clock, so
 * one move is enough (no real time passes). A second 429 means a limit that ignores the clock,
 * which is a bug worth seeing, so it is returned as is.
 */
export async function inject(t: TestApp, options: InjectOptions): Promise<LightMyRequestResponse> {
  const res = await t.app.inject(options);
  if (res.statusCode !== 429) return res;
  const seconds = Math.max(1, Number(res.headers['retry-after'] ?? 1));
  t.clock.advance(seconds * 1000);
  return t.app.inject(options);
}

/** POST /v1/send with a JSON body (retried once past a 429, see `inject`). */
export function send(
  t: TestApp,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return inject(t, { method: 'POST', url: '/v1/send', payload: body, headers });
}

/** POST /v1/send that must be accepted (202); returns the body. */
export async function sendOk(t: TestApp, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Accepted> {
  const res = await send(t, body, headers);
  expect(res.statusCode, res.body).toBe(202);
  const accepted = res.json<Accepted>();
  expect(accepted.message_id).toEqual(expect.any(String));
  return accepted;
}
