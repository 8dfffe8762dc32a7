import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import { breakerAlerts } from '../../src/alerts/breaker-alerts.js';
import { checkAlerts } from '../../src/alerts/check.js';
import { LocalBreakers, type Admission } from '../../src/delivery/breaker.js';
import { RedisBreakers } from '../../src/delivery/breaker-redis.js';
import { describeDialects } from '../support/dialects.js';
import { insertQueued } from '../support/delivery.js';
import { REDIS_URL, redisAvailable } from '../support/redis.js';
import { endpointRow, insertEndpoint, setEndpointFields, testDispatcher, useWebhookStore } from '../support/webhooks/dispatch.js';
import { startReceiver, testSecret } from '../support/webhooks/receiver.js';
import { alertLog } from './support.js';

/**
 * Issue 29: `alert.endpoint_disabled` and `alert.breaker_open` reach a real HTTP receiver through
 * the outbox, signed like message events, once per transition; the disabled endpoint itself gets
 * nothing (it is disabled), the organization's other endpoints do.
 */

const redisUp = await redisAvailable();
const PASS: Admission = { kind: 'pass' };
const silent = { error: () => undefined };

interface AlertBody {
  type: string;
  data: { alert_id: string; organization_id: string; kind: string; state: string; [k: string]: unknown };
}

const clients: Redis[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.quit().catch(() => undefined)));
});

describeDialects('alert deliveries on %s', (dialect, skip) => {
  const t = useWebhookStore(dialect, skip);

  it.skipIf(skip)('a 410 disables an endpoint: the other endpoint gets alert.endpoint_disabled signed, once', async () => {
    const gone = await startReceiver([testSecret(1)], t.closer);
    const other = await startReceiver([testSecret(2)], t.closer);
    await insertEndpoint(t.store, { id: 'gone', url: gone.url, secret: testSecret(1) }, t.clock.now());
    await insertEndpoint(t.store, { id: 'other', url: other.url, secret: testSecret(2) }, t.clock.now());
    const d = testDispatcher(t.store, t.clock, t.closer, { endpointConcurrency: 1 });
    gone.fallback = 410;
    await insertQueued(t.store, 2, t.clock.now(), 'outbox');
    await d.pump();
    await d.pump();
    expect((await endpointRow(t.store, 'gone')).enabled).toBe(0);
    expect(gone.received).toHaveLength(1);
    const alerts = other.received.filter((r) => r.webhookId.startsWith('alert_'));
    expect(alerts).toHaveLength(1);
    const [alert] = alerts;
    expect(alert?.verifiedWith).toEqual([testSecret(2)]);
    const body = alert?.payload as AlertBody;
    expect(body).toMatchObject({
      type: 'alert.endpoint_disabled',
      data: {
        organization_id: 'acme',
        kind: 'endpoint_disabled',
        state: 'firing',
        endpoint_id: 'gone',
        reason: `410 Gone from ${gone.url}`,
      },
    });
    expect(alert?.webhookId).toBe(`alert_${body.data.alert_id.slice('alrt_'.length)}`);
    expect(other.received.filter((r) => !r.webhookId.startsWith('alert_'))).toHaveLength(2);
    // Enabled again: the next check resolves it, and the endpoint itself hears of that.
    await setEndpointFields(t.store, 'gone', { enabled: 1, disabled_reason: null, failing_since: null });
    gone.fallback = 200;
    await checkAlerts(t.store, t.clock.now());
    await d.pump();
    expect(await alertLog(t.store)).toEqual(['endpoint_disabled:firing', 'endpoint_disabled:resolved']);
    const resolved = gone.received.filter((r) => r.webhookId.startsWith('alert_'));
    expect((resolved[0]?.payload as AlertBody | undefined)?.data.state).toBe('resolved');
  });

  it.skipIf(skip)('a breaker opening sends alert.breaker_open signed, once; closing it sends the resolved one', async () => {
    const r = await startReceiver([testSecret(3)], t.closer);
    await insertEndpoint(
      t.store,
      { id: 'ops', url: r.url, secret: testSecret(3), events: ['alert.breaker_open'] },
      t.clock.now(),
    );
    const d = testDispatcher(t.store, t.clock, t.closer);
    const alerts = breakerAlerts(t.store, t.clock, silent);
    const breakers = new LocalBreakers(t.clock);
    breakers.onTransition = alerts.onTransition;
    for (let i = 0; i < 7; i += 1) await breakers.failed('acme/ses', PASS, 'connect ECONNREFUSED 10.0.0.1:587');
    await alerts.idle();
    await d.pump();
    expect(r.received).toHaveLength(1);
    expect(r.received[0]?.verifiedWith).toEqual([testSecret(3)]);
    expect(r.received[0]?.payload).toMatchObject({
      type: 'alert.breaker_open',
      data: { kind: 'breaker_open', state: 'firing', service_id: 'ses', reason: 'connect ECONNREFUSED 10.0.0.1:587' },
    });
    t.clock.advance(31_000);
    const probe = await breakers.admit('acme/ses');
    expect(probe.kind).toBe('probe');
    await breakers.succeeded('acme/ses', probe);
    await alerts.idle();
    await d.pump();
    expect(r.received.map((x) => (x.payload as AlertBody).data.state)).toEqual(['firing', 'resolved']);
  });

  it.skipIf(skip || !redisUp)('two workers sharing a Redis breaker: the one whose failure opened it fires, once', async () => {
    const prefix = `test-alerts-${process.pid}-${Math.random().toString(36).slice(2)}:`;
    const alerts = breakerAlerts(t.store, t.clock, silent);
    const told: string[] = [];
    const pair = [0, 1].map(() => {
      const c = new Redis(REDIS_URL);
      clients.push(c);
      const b = new RedisBreakers(c, t.clock, { prefix });
      b.onTransition = (key, to, reason) => {
        told.push(`${key} ${to}`);
        alerts.onTransition(key, to, reason);
      };
      return b;
    });
    await Promise.all(pair.flatMap((b) => [1, 2, 3, 4].map(() => b.failed('acme/ses', PASS, 'timeout'))));
    await alerts.idle();
    // The Redis script that opened it says so to one worker only; the state row would stop a second anyway.
    expect(told).toEqual(['acme/ses open']);
    expect(await alertLog(t.store)).toEqual(['breaker_open:firing']);
    expect((await t.store.alerts.open('acme')).map((a) => a.subject)).toEqual(['ses']);
  });
});
