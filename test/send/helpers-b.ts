import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { ConfigFile } from '../../src/config/resources.js';
import type { TestApp } from '../support/app.js';
import { expectError, type Accepted } from '../support/http.js';

/**
 * Helpers of the send-path tests (keys and origins, parameters, rendering, lists) and of the
 * read-back tests (messages, history). Only test code: nothing here reaches into src/ beyond
 * the Store the app itself uses.
 */

export type OrgInput = ConfigFile['organizations'][number];
export type TemplateSeed = NonNullable<OrgInput['templates']>[number];

export { bearer, expectError, type Accepted, type ErrorBody } from '../support/http.js';
export { CONTACT_TEMPLATE } from '../support/seed.js';

export const CONTACT_PARAMS = { name: 'Ann', email: 'ann@example.com', message: 'Hello there' };

/**
 * Limits that would otherwise get in the way of tests sending many messages from one address
 * (the per-IP limit of public keys is 10 per minute by default): the fastest plan and a very
 * wide per-IP window. They change nothing else about the rules under test.
 */
export const ROOMY = { plan: 'business_200k', ip_limit: { requests: 100_000, per_seconds: 1 } } as const;

/**
 * One POST. A 429 is never what these tests are about, so a rate-limited request is retried
 * after moving the app's clock (and, if that is not enough, real time) past `Retry-After`.
 */
export async function inject(t: TestApp, options: InjectOptions): Promise<LightMyRequestResponse> {
  let res = await t.app.inject(options);
  for (let attempt = 0; attempt < 4 && res.statusCode === 429; attempt++) {
    const seconds = Math.max(1, Number(res.headers['retry-after'] ?? 1));
    t.clock.advance(seconds * 1000);
    if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(seconds, 2) * 1000 + 50));
    res = await t.app.inject(options);
  }
  return res;
}

/** POST /v1/send with a JSON body. */
export function send(t: TestApp, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
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

/** Asserts a 400 invalid_body whose `details.fields` names `field`. */
export function expectInvalidField(res: LightMyRequestResponse, field: string): void {
  const err = expectError(res, 400, 'invalid_body');
  expect((err.details?.fields ?? []).map((f) => f.field), res.body).toContain(field);
}

/** Number of message rows of an organization (all organizations when `orgId` is omitted). */
export async function messageCount(t: TestApp, orgId?: string): Promise<number> {
  let q = t.store.db.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n'));
  if (orgId !== undefined) q = q.where('org_id', '=', orgId);
  const row = await q.executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function creditsOf(t: TestApp, orgId: string): Promise<number> {
  const org = await t.store.organizations.get(orgId);
  if (org === undefined) throw new Error(`no organization ${orgId}`);
  return org.credits;
}

/** What must not change when a send fails before acceptance: messages and credits. */
export interface Snapshot {
  messages: number;
  allMessages: number;
  credits: number;
}

export async function snapshot(t: TestApp, orgId: string): Promise<Snapshot> {
  return { messages: await messageCount(t, orgId), allMessages: await messageCount(t), credits: await creditsOf(t, orgId) };
}

/** Asserts a failed send left no message row and used no credit. */
export async function expectUnchanged(t: TestApp, orgId: string, before: Snapshot): Promise<void> {
  expect(await snapshot(t, orgId)).toEqual(before);
}

/** The rendered email stored with a message (the `content` JSON column). */
export interface StoredContent {
  subject: string;
  from: { name: string; address: string };
  reply_to: Array<{ name: string; address: string }>;
  to: Array<{ name: string; address: string }>;
  cc: Array<{ name: string; address: string }>;
  bcc: Array<{ name: string; address: string }>;
  html: string;
  text: string;
}

export async function storedContent(t: TestApp, messageId: string): Promise<StoredContent> {
  const row = await t.store.db.selectFrom('message_contents').select(['content']).where('message_id', '=', messageId).executeTakeFirstOrThrow();
  return JSON.parse(row.content) as StoredContent;
}

export async function storedRow(t: TestApp, messageId: string): Promise<{ key_type: string; subject: string | null; created_at: number; org_id: string }> {
  const row = await t.store.db.selectFrom('messages').select(['key_type', 'subject', 'created_at', 'org_id'])
    .where('id', '=', messageId).executeTakeFirstOrThrow();
  return { ...row, created_at: Number(row.created_at) };
}

export const addresses = (list: ReadonlyArray<{ address: string }>): string[] => list.map((a) => a.address.toLowerCase());
