import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from '../support/app.js';
import { bearer, type Accepted } from '../support/http.js';

export { bearer, expectError, type Accepted, type ErrorBody } from '../support/http.js';

/** Parameters the seeded `contact` template accepts. */
export const PARAMS = { name: 'Ada', email: 'ada@example.org', message: 'Hello there' } as const;

/** A valid Send request for the seeded organization; `overrides` replaces top-level fields. */
export function sendBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { template_id: 'contact', template_params: { ...PARAMS }, ...overrides };
}

/**
 * POST a send call. `payload` is sent as JSON unless it is a string (then as is, with whatever
 * content type `headers` give). Headers default to the private key.
 */
export function post(
  t: TestApp, payload: unknown, headers: Record<string, string> = bearer(), url = '/v1/send',
): Promise<LightMyRequestResponse> {
  const options: InjectOptions = { method: 'POST', url, headers };
  options.payload = payload as InjectOptions['payload'];
  return t.app.inject(options);
}

/** Asserts a 202 with the Send accepted response and matching X-Mail-* headers; returns the body. */
export function expectAccepted(res: LightMyRequestResponse, status: 'queued' | 'held' = 'queued'): Accepted {
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

/** Number of message rows of an organization. */
export async function messageCount(t: TestApp, orgId = 'acme'): Promise<number> {
  const row = await t.store.db.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The organization's credit balance. */
export async function creditsOf(t: TestApp, orgId = 'acme'): Promise<number | undefined> {
  return (await t.store.organizations.get(orgId))?.credits;
}

/** Event types of a message, in order. */
export async function eventTypes(t: TestApp, messageId: string): Promise<string[]> {
  return (await t.store.messages.events(messageId)).map((e) => e.type);
}
