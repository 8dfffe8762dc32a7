import { expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/apply.js';
import { ConfigError } from '../../src/config/env.js';
import { DEFAULT_ALERT_SETTINGS } from '../../src/domain/alerts.js';
import { parseConfigText } from '../../src/resources/config-file.js';
import { admin } from '../support/admin.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { describeDialects } from '../support/dialects.js';
import { expectError, expectInvalidField } from '../support/http.js';
import { seedOrg } from '../support/seed.js';

/**
 * Issue 29, alerts: an organization's settings through GET/PUT /admin/v1/organizations/{org}/alerts
 * (defaults until set, a field left out takes its default, bad values are 400 invalid_body naming
 * the field) and through the config file's `alerts:`.
 */

describeDialects('alert settings on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, async (app) => {
    t = app;
    await seedOrg(t.store);
  });

  it.skipIf(skip)('the defaults until set; a PUT round-trips, its left-out fields take their defaults', async () => {
    const first = await admin(t, 'GET', '/organizations/acme/alerts');
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({
      bounce_rate_percent: 5,
      complaint_rate_percent: 0.1,
      min_sample: 100,
      window_hours: 24,
      breaker_open: true,
      endpoint_disabled: true,
    });
    const wanted = {
      bounce_rate_percent: 2.5,
      complaint_rate_percent: null,
      min_sample: 50,
      window_hours: 6,
      breaker_open: false,
    };
    const put = await admin(t, 'PUT', '/organizations/acme/alerts', wanted);
    expect(put.statusCode, put.body).toBe(200);
    const expected = { ...wanted, endpoint_disabled: true };
    expect(put.json()).toEqual(expected);
    expect((await admin(t, 'GET', '/organizations/acme/alerts')).json()).toEqual(expected);
    // A PUT replaces: what it leaves out goes back to its default.
    await admin(t, 'PUT', '/organizations/acme/alerts', { complaint_rate_percent: 0.3 });
    expect((await admin(t, 'GET', '/organizations/acme/alerts')).json()).toEqual({
      ...DEFAULT_ALERT_SETTINGS,
      complaint_rate_percent: 0.3,
    });
  });

  it.skipIf(skip)('bad values are 400 invalid_body naming the field; an unknown organization is 404', async () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ bounce_rate_percent: 0 }, 'bounce_rate_percent'],
      [{ bounce_rate_percent: 101 }, 'bounce_rate_percent'],
      [{ complaint_rate_percent: 'high' }, 'complaint_rate_percent'],
      [{ min_sample: 0 }, 'min_sample'],
      [{ min_sample: 1.5 }, 'min_sample'],
      [{ window_hours: 73 }, 'window_hours'],
      [{ breaker_open: 'yes' }, 'breaker_open'],
      [{ surprise: true }, 'surprise'],
    ];
    for (const [body, field] of bad) expectInvalidField(await admin(t, 'PUT', '/organizations/acme/alerts', body), field);
    expectError(await admin(t, 'GET', '/organizations/nope/alerts'), 404, 'not_found');
    expectError(await admin(t, 'PUT', '/organizations/nope/alerts', {}), 404, 'not_found');
    expectError(await admin(t, 'GET', '/organizations/nope/alerts/events'), 404, 'not_found');
    expectInvalidField(await admin(t, 'GET', '/organizations/acme/alerts/events?limit=0'), 'limit');
    expect((await admin(t, 'GET', '/organizations/acme/alerts')).json()).toEqual(DEFAULT_ALERT_SETTINGS);
  });

  it.skipIf(skip)('…/alerts/events lists what fires now and the latest events, newest first', async () => {
    const now = t.clock.now();
    const empty = await admin(t, 'GET', '/organizations/acme/alerts/events');
    expect(empty.json()).toEqual({ open: [], items: [] });
    const detail = { service_id: 'ses', reason: 'connect ECONNREFUSED' };
    const fired = await t.store.transaction((tx) => tx.alerts.fire('acme', 'breaker_open', 'ses', detail, now));
    const rate = { percent: 6, threshold_percent: 5, count: 6, sample: 100, window_hours: 24 };
    await t.store.transaction((tx) => tx.alerts.fire('acme', 'bounce_rate', '', { rate }, now + 1000));
    await t.store.transaction((tx) =>
      tx.alerts.resolve('acme', 'bounce_rate', '', { rate: { ...rate, percent: 4 } }, now + 2000),
    );
    const res = await admin(t, 'GET', '/organizations/acme/alerts/events?limit=2');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      open: [{ alert_id: `alrt_${fired?.id}`, kind: 'breaker_open', since: new Date(now).toISOString(), ...detail }],
      items: [
        expect.objectContaining({ kind: 'bounce_rate', state: 'resolved', at: new Date(now + 2000).toISOString() }),
        expect.objectContaining({ kind: 'bounce_rate', state: 'firing', rate }),
      ],
    });
  });

  it.skipIf(skip)('the config file sets them under alerts:, a second apply changes nothing, bad ones are refused', async () => {
    const file = (alerts: string) =>
      parseConfigText(`organizations:\n  - id: acme\n    name: Acme\n    alerts:\n${alerts}`, 'mailroom.yaml', {});
    const first = await applyConfig(t.store, file('      bounce_rate_percent: 3\n      endpoint_disabled: false\n'));
    expect(first.changes).toContain('organization acme: alerts updated');
    expect(await t.store.alerts.settings('acme')).toEqual({
      ...DEFAULT_ALERT_SETTINGS,
      bounce_rate_percent: 3,
      endpoint_disabled: false,
    });
    const again = await applyConfig(t.store, file('      bounce_rate_percent: 3\n      endpoint_disabled: false\n'));
    expect(again.changes).not.toContain('organization acme: alerts updated');
    expect(() => file('      window_hours: 0\n')).toThrow(ConfigError);
    expect(() => file('      window_hours: 0\n')).toThrow(/alerts\/window_hours|alerts.window_hours/);
  });
});
