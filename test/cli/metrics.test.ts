import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { loadConfig } from '../../src/config/env.js';
import { systemClock } from '../../src/domain/clock.js';
import { openStore } from '../../src/storage/store.js';
import { freshApp } from '../support/app.js';
import { seedOrg } from '../support/seed.js';
import { freshDatabase } from '../support/stores.js';
import { Closer, tempDir } from '../support/cleanup.js';
import { CONTACT_TEMPLATE, insertQueued, smtpService } from '../support/delivery.js';
import { startSink, waitFor, freePort } from '../support/smtp-sink.js';
import { requireBuild, startCli } from '../support/processes.js';
import { describeDialects } from '../support/dialects.js';

const c = new Closer();
const closer = new Closer();
afterEach(async () => {
  await c.closeAll();
  await closer.closeAll();
});
beforeAll(requireBuild);

const TOKEN = 'metrics-token-0123456789abcdef';

interface Envelope {
  error: { code: string; message: string; docs_url: string };
}

/** The value of one sample line (`name{labels} value`) of a Prometheus text page, or undefined. */
function sample(page: string, series: string): number | undefined {
  const line = page.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics configuration', () => {
  it('reads MAILROOM_METRICS_PORT and MAILROOM_METRICS_TOKEN, and --metrics-port is checked by the same rule', async () => {
    expect(loadConfig({})).toMatchObject({ metricsPort: undefined, metricsToken: undefined });
    expect(loadConfig({ MAILROOM_METRICS_PORT: '9464', MAILROOM_METRICS_TOKEN: TOKEN })).toMatchObject({
      metricsPort: 9464,
      metricsToken: TOKEN,
    });
    expect(() => loadConfig({ MAILROOM_METRICS_TOKEN: 'short' })).toThrow(
      /MAILROOM_METRICS_TOKEN must be at least 16 characters/,
    );
    const err: string[] = [];
    expect(
      await main(
        ['worker', '--metrics-port', 'nine'],
        { MAILROOM_DATA_DIR: '/nonexistent' },
        () => undefined,
        (l) => err.push(l),
      ),
    ).toBe(2);
    expect(err.join('\n')).toContain('MAILROOM_METRICS_PORT must be a whole number from 0 to 65535, got "nine"');
  });
});

describeDialects('GET /metrics of the API on %s', (dialect, skip) => {
  it.skipIf(skip)('is open without MAILROOM_METRICS_TOKEN, and needs the bearer token with it', async () => {
    const open = await freshApp(dialect);
    closer.defer(() => open.cleanup());
    expect((await open.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);

    const t = await freshApp(dialect, { MAILROOM_METRICS_TOKEN: TOKEN });
    closer.defer(() => t.cleanup());
    for (const authorization of [
      undefined,
      'Bearer wrong-token-0123456789abcdef',
      `Basic ${TOKEN}`,
      `Bearer ${TOKEN}x`,
      'Bearer ',
    ]) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(res.json<Envelope>().error).toMatchObject({
        code: 'unauthorized',
        message: expect.stringContaining('MAILROOM_METRICS_TOKEN'),
      });
    }
    const ok = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('mailroom_messages_sent_total');
    // The token guards /metrics only: the health check stays open for load balancers.
    expect((await t.app.inject({ method: 'GET', url: '/v1/health' })).statusCode).toBe(200);
  });
});

describeDialects('mailroom worker --metrics-port on %s', (dialect, skip) => {
  it.skipIf(skip)('serves its delivery counters and a health check, behind the token', { timeout: 60_000 }, async () => {
    const sink = await startSink({}, closer);
    const database = await freshDatabase(dialect);
    c.defer(() => database.drop());
    const store = await openStore(database.url, { clock: systemClock });
    closer.defer(() => store.close());
    await seedOrg(store, { credits: 100, services: [smtpService(sink.port)], templates: [CONTACT_TEMPLATE] });
    await insertQueued(store, 3, Date.now());

    const port = await freePort();
    const worker = startCli(
      ['worker', '--metrics-port', String(port)],
      {
        MAILROOM_DATABASE_URL: database.url,
        MAILROOM_DATA_DIR: tempDir(c),
        MAILROOM_HOST: '127.0.0.1',
        MAILROOM_WORKER_POLL_MS: '50',
        MAILROOM_LOG_LEVEL: 'warn',
        MAILROOM_METRICS_TOKEN: TOKEN,
      },
      c,
    );
    await worker.waitForOutput(`metrics: http://127.0.0.1:${port}/metrics`);
    const base = `http://127.0.0.1:${port}`;
    const scrape = async () => (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();

    await waitFor(() => sink.received.length === 3, 20_000, 'the worker to deliver 3 messages');
    await waitFor(
      async () => sample(await scrape(), 'mailroom_messages_sent_total{service="smtp"}') === 3,
      10_000,
      'the sent counter to reach 3',
    );
    const page = await scrape();
    expect(sample(page, 'mailroom_send_duration_seconds_count{service="smtp"}')).toBe(3);
    expect(sample(page, 'mailroom_queue_depth')).toBe(0);

    const refused = await fetch(`${base}/metrics`);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as Envelope).error.code).toBe('unauthorized');
    expect((await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer not-the-token-at-all-000' } })).status).toBe(401);

    const health = await fetch(`${base}/v1/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', database: 'ok', dialect });
    const missing = await fetch(`${base}/v1/send`, { method: 'POST' });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as Envelope).error.code).toBe('not_found');

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  });

  it.skipIf(skip)('listens nowhere without a metrics port', { timeout: 30_000 }, async () => {
    const database = await freshDatabase(dialect);
    c.defer(() => database.drop());
    const worker = startCli(
      ['worker'],
      { MAILROOM_DATABASE_URL: database.url, MAILROOM_DATA_DIR: tempDir(c), MAILROOM_LOG_LEVEL: 'warn' },
      c,
    );
    await worker.waitForOutput('metrics: off');
    worker.child.kill('SIGTERM');
    expect(await worker.exited, worker.output()).toBe(0);
  });
});
