import { createHmac, randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { ProviderEvent } from '../../src/events/types.js';
import type { Dialect } from '../../src/storage/dialect.js';
import { admin, createOrg } from '../admin/helpers.js';
import { freshApp, type TestApp } from '../support/app.js';
import { databaseOf } from '../support/db.js';

/**
 * The provider events route of the real app over a real database, and the providers' signing
 * as they document it, with secrets made here.
 */

export type IntakeApp = TestApp;

export async function intakeApp(dialect: Dialect): Promise<IntakeApp> {
  return freshApp(dialect);
}

/** The events stored by the record step (provider_events), as the sources produced them, in arrival order. */
export async function recorded(t: TestApp): Promise<ProviderEvent[]> {
  const rows = await databaseOf(t.store).selectFrom('provider_events').select(['detail', 'received_at', 'event_key'])
    .orderBy('received_at').orderBy('event_key').execute();
  return rows.map((r) => JSON.parse(r.detail) as ProviderEvent);
}

/** mailroom_provider_events_total for one source and outcome, as /metrics shows it. */
export async function providerEventsCount(t: TestApp, source: string, outcome: string): Promise<number> {
  const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith('mailroom_provider_events_total{') && l.includes(`source="${source}"`) && l.includes(`outcome="${outcome}"`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

/** Creates org `acme` with an outbox service `id` receiving `events`; returns its events URL path. */
export async function serviceWithEvents(t: TestApp, id: string, events: Record<string, unknown> | undefined): Promise<string> {
  if ((await t.store.organizations.get('acme')) === undefined) await createOrg(t);
  const res = await admin(t, 'PUT', `/organizations/acme/services/${id}`, { provider: 'outbox', default: false, ...(events === undefined ? {} : { events }) });
  expect(res.statusCode, res.body).toBe(201);
  return new URL(res.json<{ events_url: string }>().events_url).pathname;
}

/** One POST; the test clock moves 1 ms first, so stored events keep their arrival order. */
export function post(t: TestApp, path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  t.clock.advance(1);
  return t.app.inject({ method: 'POST', url: path, payload: body, headers: { 'content-type': 'application/json', ...headers } });
}

export const basic = (user: string, pass: string): Record<string, string> => ({ authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` });

/** Mailgun's signature object: HMAC-SHA256(signing key, timestamp + token), hex. */
export function mailgunSignature(signingKey: string, nowMs: number, token = randomBytes(25).toString('hex')): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  return { timestamp, token, signature: createHmac('sha256', signingKey).update(timestamp + token).digest('hex') };
}

export const newSvixSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/** Svix's headers for `body`: v1 HMAC-SHA256 over id.timestamp.body with the key after whsec_. */
export function svixHeaders(secret: string, body: string, nowMs: number, id = `msg_${randomBytes(12).toString('hex')}`): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const sig = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'svix-id': id, 'svix-timestamp': timestamp, 'svix-signature': `v1,${sig}` };
}
