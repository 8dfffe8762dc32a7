import { afterEach, expect } from 'vitest';
import type { Dialect } from '../../src/storage/dialect.js';
import { admin } from '../admin/helpers.js';
import { freshApp, type TestApp } from '../support/app.js';
import { Closer, tempDir } from '../support/cleanup.js';
import { startSink, type Sink } from '../support/smtp-sink.js';
import { newWorker, row, seedSmtpOrg, send, smtpService } from '../support/delivery.js';

/**
 * A message really sent (send route, worker, SMTP sink) by service `smtp` of org `acme`, whose
 * `events` settings are given, in an app built with `env`: what SES and SendGrid events are
 * about in the end-to-end tests. Everything is closed after each test.
 */
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

export function sentMessageHarness(): (dialect: Dialect, events: EventsSettings, options?: SentOptions) => Promise<SentSetup> {
  let closer = new Closer();
  afterEach(async () => {
    await closer.closeAll();
    closer = new Closer();
  });
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

/** POST as a provider would, raw bytes. */
export function postEvent(t: TestApp, path: string, body: string, headers: Record<string, string> = {}) {
  t.clock.advance(1);
  return t.app.inject({ method: 'POST', url: path, payload: body, headers: { 'content-type': 'application/json', ...headers } });
}
