import type { LightMyRequestResponse } from 'fastify';
import { afterEach, expect } from 'vitest';
import type { ProviderEvent } from '../../../src/events/types.js';
import type { Dialect } from '../../../src/storage/dialect.js';
import { admin, createOrg } from '../admin.js';
import { freshApp, type TestApp } from '../app.js';
import { Closer, tempDir } from '../cleanup.js';
import { databaseOf } from '../db.js';
import { newWorker, row, seedSmtpOrg, send, smtpService } from '../delivery.js';
import { startSink, type Sink } from '../smtp-sink.js';

/**
 * The provider events route of the real app over a real database: services that receive
 * events, posts as a provider makes them, what the record step stored, and a message really
 * sent (send route, worker, SMTP sink) for the events to be about. Signing is in ./signing.ts.
 */

/** The events stored by the record step (provider_events), as the sources produced them, in arrival order. */
export async function recorded(t: TestApp): Promise<ProviderEvent[]> {
  const rows = await databaseOf(t.store)
    .selectFrom('provider_events')
    .select(['detail', 'received_at', 'event_key'])
    .orderBy('received_at')
    .orderBy('event_key')
    .execute();
  return rows.map((r) => JSON.parse(r.detail) as ProviderEvent);
}

/** mailroom_provider_events_total for one source and outcome, as /metrics shows it. */
export async function providerEventsCount(t: TestApp, source: string, outcome: string): Promise<number> {
  const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('mailroom_provider_events_total{') && l.includes(`source="${source}"`) && l.includes(`outcome="${outcome}"`),
    );
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

/** Creates org `acme` with an outbox service `id` receiving `events`; returns its events URL path. */
export async function serviceWithEvents(t: TestApp, id: string, events: Record<string, unknown> | undefined): Promise<string> {
  if ((await t.store.organizations.get('acme')) === undefined) await createOrg(t);
  const res = await admin(t, 'PUT', `/organizations/acme/services/${id}`, {
    provider: 'outbox',
    default: false,
    ...(events === undefined ? {} : { events }),
  });
  expect(res.statusCode, res.body).toBe(201);
  return new URL(res.json<{ events_url: string }>().events_url).pathname;
}

/** One POST as a provider makes it, raw bytes; the test clock moves 1 ms first, so stored events keep their arrival order. */
export function post(
  t: TestApp,
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  t.clock.advance(1);
  return t.app.inject({ method: 'POST', url: path, payload: body, headers: { 'content-type': 'application/json', ...headers } });
}

/** A message really sent by service `smtp` of org `acme`, what SES and SendGrid events are about in the end-to-end tests. */
export interface SentSetup {
  t: TestApp;
  sink: Sink;
  /** Our message id (msg_…). */
  id: string;
  /** The Message-ID header the sink received. */
  headerMessageId: string;
  /** Path of the service's events_url. */
  eventsPath: string;
}

type EventsSettings = NonNullable<NonNullable<Parameters<typeof smtpService>[1]>['events']>;

export interface SentOptions {
  /** Environment of the app (e.g. MAILROOM_SNS_CERT_HOSTS). */
  env?: Record<string, string>;
  /** Start the test clock here (a certificate made now is not valid on the default 2026-01-01). */
  at?: number;
}

/**
 * Sends one message through service `smtp` (its `events` settings given) in an app built with
 * `env`; everything is closed after each test.
 */
export function sentMessageHarness(): (dialect: Dialect, events: EventsSettings, options?: SentOptions) => Promise<SentSetup> {
  const closer = new Closer();
  afterEach(() => closer.closeAll());
  return async (dialect, events, options = {}) => {
    const t = await freshApp(dialect, options.env ?? {});
    closer.defer(() => t.cleanup());
    if (options.at !== undefined) t.clock.set(options.at);
    const sink = await startSink({ clock: t.clock }, closer);
    await seedSmtpOrg(t.store, smtpService(sink.port, { events }));
    const { worker } = newWorker({ store: t.store, clock: t.clock, dataDir: tempDir(closer) }, closer);
    const id = await send(t);
    expect(await worker.runOnce()).toBe(1);
    expect((await row(t.store, id)).status).toBe('sent');
    const raw = sink.received[0]?.raw.toString('utf8') ?? '';
    const headerMessageId = sink.received[0]?.messageId ?? /^Message-ID:\s*(<[^>\r\n]+>)/im.exec(raw)?.[1];
    if (headerMessageId === undefined) throw new Error('the sink received no Message-ID header');
    const shown = await admin(t, 'GET', '/organizations/acme/services/smtp');
    expect(shown.statusCode, shown.body).toBe(200);
    const eventsPath = new URL(shown.json<{ events_url: string }>().events_url).pathname;
    return { t, sink, id, headerMessageId, eventsPath };
  };
}
