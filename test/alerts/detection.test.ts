import { expect, it } from 'vitest';
import { checkAlerts, rateVerdict } from '../../src/alerts/check.js';
import { DEFAULT_ALERT_SETTINGS } from '../../src/domain/alerts.js';
import { housekeeping } from '../../src/delivery/housekeeping.js';
import { describeDialects } from '../support/dialects.js';
import { deliveryRows, insertEndpoint, useWebhookStore } from '../support/webhooks/dispatch.js';
import { testSecret } from '../support/webhooks/receiver.js';
import { alertLog, insertStatus } from './support.js';

/**
 * Issue 29, alerts' rate check (src/alerts/check.ts, run by housekeeping): a crossing fires once
 * (however many checks run at once), stays quiet while over, resolves once when back under, and
 * never fires below the minimum sample. Test-mode messages do not count.
 */

const HOUR = 3_600_000;

it('the rule: at or over the threshold with the sample; 1 of 1,000 is 0.1 % exactly', () => {
  const s = DEFAULT_ALERT_SETTINGS;
  expect(rateVerdict(1, 1000, 0.1, s).kind).toBe('over');
  expect(rateVerdict(0, 1000, 0.1, s).kind).toBe('under');
  expect(rateVerdict(5, 100, 5, s).kind).toBe('over');
  expect(rateVerdict(4, 100, 5, s).kind).toBe('under');
  expect(rateVerdict(50, 99, 5, s).kind).toBe('off');
  expect(rateVerdict(50, 100, null, s).kind).toBe('off');
});

describeDialects('alert rate check on %s', (dialect, skip) => {
  const t = useWebhookStore(dialect, skip);

  it.skipIf(skip)(
    'a crossing fires once, stays quiet while over, resolves once back under; deliveries go to subscribers',
    async () => {
      const now = t.clock.now();
      await insertEndpoint(t.store, { id: 'all', url: 'http://127.0.0.1:9/a', secret: testSecret(1) }, now);
      await insertEndpoint(
        t.store,
        { id: 'bounces', url: 'http://127.0.0.1:9/b', secret: testSecret(2), events: ['alert.bounce_rate'] },
        now,
      );
      await insertEndpoint(
        t.store,
        { id: 'msgs', url: 'http://127.0.0.1:9/c', secret: testSecret(3), events: ['message.sent'] },
        now,
      );
      await insertStatus(t.store, 'delivered', 94, now - 2 * HOUR);
      await insertStatus(t.store, 'bounced', 6, now - HOUR);
      // Outside the 24 h window: not counted (it would make the rate 3 %).
      await insertStatus(t.store, 'delivered', 100, now - 25 * HOUR);
      // Test-mode bounces are not the organization's reputation.
      await insertStatus(t.store, 'bounced', 50, now - HOUR, 'test');

      const fired = await checkAlerts(t.store, now);
      expect(fired.map((e) => `${e.kind}:${e.state}`)).toEqual(['bounce_rate:firing']);
      expect(fired[0]?.detail.rate).toEqual({ percent: 6, threshold_percent: 5, count: 6, sample: 100, window_hours: 24 });
      expect((await checkAlerts(t.store, now + 60_000)).length).toBe(0);
      const open = await t.store.alerts.open('acme');
      expect(open.map((a) => a.kind)).toEqual(['bounce_rate']);
      expect(open[0]?.event_id).toBe(fired[0]?.id);

      const rows = await deliveryRows(t.store);
      expect(rows.map((r) => [r.endpoint_id, r.event_type, Number(r.event_id)])).toEqual([
        ['all', 'alert.bounce_rate', -(fired[0]?.id ?? 0)],
        ['bounces', 'alert.bounce_rate', -(fired[0]?.id ?? 0)],
      ]);
      expect(JSON.parse(rows[0]?.payload ?? '{}')).toMatchObject({
        type: 'alert.bounce_rate',
        data: { organization_id: 'acme', kind: 'bounce_rate', state: 'firing', rate: { percent: 6 } },
      });

      // 50 more delivered: 6 of 150 is 4 %, under 5.
      await insertStatus(t.store, 'delivered', 50, now);
      const resolved = await checkAlerts(t.store, now + 120_000);
      expect(resolved.map((e) => `${e.kind}:${e.state}`)).toEqual(['bounce_rate:resolved']);
      expect((await checkAlerts(t.store, now + 180_000)).length).toBe(0);
      expect(await t.store.alerts.open('acme')).toEqual([]);
      expect(await alertLog(t.store)).toEqual(['bounce_rate:firing', 'bounce_rate:resolved']);
      expect((await deliveryRows(t.store)).length).toBe(4);
    },
  );

  it.skipIf(skip)('checks running at once (several workers) fire once; so do racing fires of one alert', async () => {
    const now = t.clock.now();
    await insertStatus(t.store, 'delivered', 998, now - HOUR);
    await insertStatus(t.store, 'complained', 2, now - HOUR);
    const runs = await Promise.all([1, 2, 3, 4].map(() => checkAlerts(t.store, now)));
    expect(runs.flat().map((e) => `${e.kind}:${e.state}`)).toEqual(['complaint_rate:firing']);
    const fires = await Promise.all(
      [1, 2, 3, 4, 5].map(() =>
        t.store.transaction((tx) => tx.alerts.fire('acme', 'breaker_open', 'ses', { service_id: 'ses' }, now)),
      ),
    );
    expect(fires.filter((f) => f !== undefined)).toHaveLength(1);
    const resolves = await Promise.all(
      [1, 2, 3].map(() => t.store.transaction((tx) => tx.alerts.resolve('acme', 'breaker_open', 'ses', {}, now + 1))),
    );
    expect(resolves.filter((f) => f !== undefined)).toHaveLength(1);
    expect(await alertLog(t.store)).toEqual(['complaint_rate:firing', 'breaker_open:firing', 'breaker_open:resolved']);
  });

  it.skipIf(skip)("the worker's housekeeping runs the check (a minute apart)", async () => {
    const now = t.clock.now();
    await insertStatus(t.store, 'sent', 90, now - HOUR);
    await insertStatus(t.store, 'bounced', 10, now - HOUR);
    await housekeeping({ store: t.store }, now);
    expect(await alertLog(t.store)).toEqual(['bounce_rate:firing']);
  });

  it.skipIf(skip)('below the minimum sample nothing fires, however high the rate; null turns a rate alert off', async () => {
    const now = t.clock.now();
    await insertStatus(t.store, 'delivered', 40, now - HOUR);
    await insertStatus(t.store, 'bounced', 40, now - HOUR);
    expect(await checkAlerts(t.store, now)).toEqual([]);
    await t.store.alerts.putSettings('acme', { ...DEFAULT_ALERT_SETTINGS, min_sample: 80 }, now);
    expect((await checkAlerts(t.store, now)).map((e) => e.kind)).toEqual(['bounce_rate']);
    await t.store.alerts.putSettings('acme', { ...DEFAULT_ALERT_SETTINGS, min_sample: 80, bounce_rate_percent: null }, now);
    const off = await checkAlerts(t.store, now + 60_000);
    expect(off.map((e) => [e.kind, e.state, e.detail.reason])).toEqual([['bounce_rate', 'resolved', 'alert turned off']]);
  });
});
