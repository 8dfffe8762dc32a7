import { createHmac, randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { ProviderEvent, RecordOutcome } from '../../src/events/types.js';
import { providerEventsDeps, registerProviderEvents } from '../../src/http/routes/provider-events.js';
import type { Dialect } from '../../src/storage/dialect.js';
import { admin, createOrg } from '../admin/helpers.js';
import { buildTestApp, testConfig, type TestApp } from '../support/app.js';
import { freshStore } from '../support/stores.js';

/**
 * The provider events route over a real app and database, and the providers' signing as they
 * document it, with secrets made here. `recorded` is what reached the record step.
 */

export interface IntakeApp extends TestApp {
  recorded: ProviderEvent[];
  counted: Array<{ source: string; outcome: string; n: number }>;
}

/** Stand-in for the events core until recordProviderEvents lands: keeps what it is given. */
export async function intakeApp(dialect: Dialect): Promise<IntakeApp> {
  const ts = await freshStore(dialect);
  const config = testConfig();
  const app = await buildTestApp(config, { store: ts.store, clock: ts.clock });
  const recorded: ProviderEvent[] = [];
  const counted: IntakeApp['counted'] = [];
  const seen = new Set<string>();
  const record = async (_service: unknown, events: ProviderEvent[]): Promise<RecordOutcome[]> => events.map((e) => {
    const key = `${e.source}/${e.eventKey}`;
    if (seen.has(key)) return 'duplicate';
    seen.add(key);
    recorded.push(e);
    return 'recorded';
  });
  await registerProviderEvents(app, providerEventsDeps(ts.store, ts.clock, record, (source) => counted.push({ source, outcome: 'rejected', n: 1 })), config.baseUrl);
  await app.ready();
  return {
    ...ts, app, config, recorded, counted,
    cleanup: async () => {
      await app.close();
      await ts.cleanup();
    },
  };
}

/** Creates org `acme` with an outbox service `id` receiving `events`; returns its events URL path. */
export async function serviceWithEvents(t: TestApp, id: string, events: Record<string, unknown> | undefined): Promise<string> {
  if ((await t.store.organizations.get('acme')) === undefined) await createOrg(t);
  const res = await admin(t, 'PUT', `/organizations/acme/services/${id}`, { provider: 'outbox', default: false, ...(events === undefined ? {} : { events }) });
  expect(res.statusCode, res.body).toBe(201);
  return new URL(res.json<{ events_url: string }>().events_url).pathname;
}

export function post(t: TestApp, path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
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
