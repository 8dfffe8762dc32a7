import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { buildServices, createDispatcher } from '../../src/cli/runtime.js';
import type { App } from '../../src/http/app-types.js';
import type { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { admin } from '../support/admin.js';
import { testConfig, type TestApp } from '../support/app.js';
import { Closer } from '../support/cleanup.js';
import { insertQueued } from '../support/delivery.js';
import { describeDialects } from '../support/dialects.js';
import { seedOrg } from '../support/seed.js';
import { freshStore } from '../support/stores.js';
import { testSecret } from '../support/webhooks/receiver.js';

/**
 * The case: a receiver behind basic auth. Without the header it answers 401 and the
 * delivery is retried, then failed; with the header (added in the admin API) the replay and the
 * test event are accepted. Sent on every attempt, never shown: not in any admin read, the
 * delivery log (masked there), nor any log line the process wrote (captured at trace level).
 */

const HOOKS = '/organizations/acme/webhooks';
const SECRET = testSecret(7);
const CREDENTIALS = `Basic ${Buffer.from('hook:s3cret-pa55-QX7').toString('base64')}`;

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  status: number;
}

/** A loopback receiver behind basic auth that also checks the Standard Webhooks signature. */
async function basicAuthReceiver(closer: Closer): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter((e): e is [string, string] => typeof e[1] === 'string'),
      );
      new Webhook(SECRET).verify(body, headers);
      const status = req.headers.authorization === CREDENTIALS ? 200 : 401;
      received.push({ headers: req.headers, body, status });
      res.writeHead(status, status === 401 ? { 'www-authenticate': 'Basic realm="hooks"' } : {}).end(`answer ${status}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closer.defer(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

interface Delivery {
  id: string;
  state: string;
  attempts: number;
  request_body: string | null;
  log: Array<{ status: number | null; request_headers: Record<string, string> | null }>;
}

describeDialects('webhook custom headers sent to a receiver behind basic auth on %s', (dialect, skip) => {
  let closer: Closer;
  let t: Pick<TestApp, 'store' | 'clock'> & { app: App };
  let dispatcher: WebhookDispatcher;
  let logged: string[];
  beforeEach(async () => {
    closer = new Closer();
    if (skip) return;
    const ts = await freshStore(dialect);
    closer.defer(() => ts.cleanup());
    ts.clock.set(Date.now());
    await seedOrg(ts.store);
    logged = [];
    const stream = { write: (line: string) => void logged.push(line) };
    const config = testConfig({ MAILROOM_LOG_LEVEL: 'trace', MAILROOM_WEBHOOK_RETRY_SCHEDULE: '0,1,1' });
    const services = buildServices(config, { store: ts.store, clock: ts.clock, logger: pino({ level: 'trace' }, stream) });
    const app = await buildApp({ ...services, config, logStream: stream });
    await app.ready();
    closer.defer(async () => {
      await app.close();
      await services.close();
    });
    dispatcher = createDispatcher(services, 20);
    closer.defer(() => dispatcher.stop(2000));
    t = { app, store: ts.store, clock: ts.clock };
  });
  afterEach(async () => {
    await closer.closeAll();
  });

  /** Claims and sends until nothing is due at the clock's time. */
  const pump = async () => {
    for (;;) {
      const started = await dispatcher.fill();
      await dispatcher.idle();
      if (started === 0) return;
    }
  };
  const deliveries = async () =>
    (await admin(t as TestApp, 'GET', `${HOOKS}/crm/deliveries`)).json<{ items: Delivery[] }>().items;

  it.skipIf(skip)('401 without the header (retried, then failed); with it 200 on replay and test; never shown', async () => {
    const tt = t as TestApp;
    const receiver = await basicAuthReceiver(closer);
    const created = await admin(tt, 'POST', HOOKS, { id: 'crm', url: receiver.url, secret: SECRET });
    expect(created.statusCode, created.body).toBe(201);
    await insertQueued(t.store, 1, t.clock.now(), 'outbox');
    // Three attempts a second apart (with the schedule's jitter: a step of 5 s covers it).
    for (let i = 0; i < 3; i++) {
      await pump();
      t.clock.advance(5000);
    }
    const [failed] = await deliveries();
    expect(failed).toMatchObject({ state: 'failed', attempts: 3 });
    expect(failed?.log.map((a) => a.status)).toEqual([401, 401, 401]);
    expect(receiver.received.map((r) => r.headers.authorization)).toEqual([undefined, undefined, undefined]);

    const patched = await admin(tt, 'PATCH', `${HOOKS}/crm`, {
      headers: [
        { name: 'Authorization', value: CREDENTIALS },
        { name: 'X-Receiver-Route', value: 'mail' },
      ],
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const replay = await admin(tt, 'POST', `${HOOKS}/crm/deliveries/${failed?.id}/replay`);
    expect(replay.statusCode, replay.body).toBe(202);
    await pump();
    const tested = await admin(tt, 'POST', `${HOOKS}/crm/test`);
    expect(tested.json<{ ok: boolean; status: number }>()).toMatchObject({ ok: true, status: 200 });
    expect(receiver.received.slice(3).map((r) => [r.status, r.headers.authorization, r.headers['x-receiver-route']])).toEqual([
      [200, CREDENTIALS, 'mail'],
      [200, CREDENTIALS, 'mail'],
    ]);
    // Ours are still ours: the receiver got our content type and user agent beside the custom ones.
    expect(receiver.received[3]?.headers['content-type']).toBe('application/json');
    expect(receiver.received[3]?.headers['user-agent']).toBe('mailroom-webhooks/1');

    // The log shows what each attempt sent: the body as received, signature headers, custom values masked.
    const log = await deliveries();
    const message = log.find((d) => d.id === failed?.id);
    expect(message).toMatchObject({ state: 'succeeded', attempts: 4 });
    expect(message?.request_body).toBe(receiver.received[3]?.body);
    const sent = message?.log[3]?.request_headers ?? {};
    expect(sent).toMatchObject({
      Authorization: '********',
      'X-Receiver-Route': '********',
      'content-type': 'application/json',
      'webhook-id': receiver.received[3]?.headers['webhook-id'],
      'webhook-timestamp': receiver.received[3]?.headers['webhook-timestamp'],
      'webhook-signature': receiver.received[3]?.headers['webhook-signature'],
    });
    expect(message?.log[0]?.request_headers).not.toHaveProperty('Authorization');
    const test = log.find((d) => d.id !== failed?.id);
    expect(test?.log[0]?.request_headers).toMatchObject({ Authorization: '********' });

    // Never shown: every admin read of the endpoint and its log, and every line the process logged.
    const reads = await Promise.all([
      admin(tt, 'GET', HOOKS),
      admin(tt, 'GET', `${HOOKS}/crm`),
      admin(tt, 'GET', `${HOOKS}/crm/deliveries`),
      admin(tt, 'GET', `${HOOKS}/deliveries`),
      admin(tt, 'GET', `${HOOKS}/crm/deliveries/${failed?.id}`),
      admin(tt, 'GET', `${HOOKS}/deliveries/${failed?.id}`),
    ]);
    for (const r of [patched, tested, ...reads]) {
      expect(r.statusCode, r.body).toBeLessThan(300);
      expect(r.body).not.toContain(CREDENTIALS);
      expect(r.body).not.toContain('s3cret-pa55-QX7');
    }
    expect(logged.length).toBeGreaterThan(5);
    const all = logged.join('');
    expect(all).not.toContain(CREDENTIALS.slice('Basic '.length));
    expect(all).not.toContain('s3cret-pa55-QX7');
  });
});
