import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../src/domain/clock.js';
import type { Store } from '../../src/storage/store.js';
import { recordProviderEvents } from '../../src/events/record.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { sendTestEvent } from '../../src/webhooks/test-event.js';
import { createWebhookHttp } from '../../src/webhooks/http-post.js';
import { insertQueued } from '../delivery/harness.js';
import { Closer } from '../support/cleanup.js';
import { seedOrg } from '../support/seed.js';
import { DIALECTS, freshStore, postgresAvailable } from '../support/stores.js';
import {
  deliveryRows, endpointRow, insertEndpoint, nowClock, setEndpointFields, startReceiver, testDispatcher, testSecret, testSettings,
} from './support.js';

const pgUp = await postgresAvailable();
const SECRET = testSecret(7);

interface Body { type: string; timestamp: string; data: Record<string, unknown> }

describe.each(DIALECTS)('webhook deliveries on %s', (dialect) => {
  const skip = dialect === 'postgres' && !pgUp;
  let closer: Closer;
  let store: Store;
  let clock: ManualClock;
  beforeEach(async () => {
    closer = new Closer();
    if (skip) return;
    const t = await freshStore(dialect);
    closer.defer(() => t.cleanup());
    store = t.store;
    clock = nowClock(t.clock);
    await seedOrg(store);
  });
  afterEach(async () => {
    await closer.closeAll();
  });

  const message = async () => (await insertQueued(store, 1, clock.now(), 'outbox'))[0] ?? '';

  it.skipIf(skip)('a receiver down, then 500, then 200: nothing lost, the same webhook-id and body each time, all in the log', async () => {
    const r = await startReceiver([SECRET], closer);
    await insertEndpoint(store, { id: 'wh_1', url: r.url, secret: SECRET }, clock.now());
    const d = testDispatcher(store, clock, closer);
    await r.down();
    const id = await message();
    await d.pump();
    expect(r.received).toHaveLength(0);
    await r.up();
    r.script([500]);
    clock.advance(1000);
    await d.pump();
    clock.advance(1000);
    await d.pump();
    expect(r.received.map((x) => x.answered)).toEqual([500, 200]);
    expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
    expect(new Set(r.received.map((x) => x.webhookId))).toEqual(new Set([`${id}.1`]));
    expect(r.received[0]?.body).toBe(r.received[1]?.body);
    const body = r.received[1]?.payload as Body;
    expect(body).toMatchObject({ type: 'message.queued', data: { message_id: id, organization_id: 'acme', template_id: 'contact', service_id: 'outbox', status: 'queued', sequence: 1 } });
    const [entry] = await store.webhookDeliveries.list('acme', {}, 10);
    expect(entry).toMatchObject({ state: 'succeeded', attempts: 3, webhook_id: `${id}.1`, last_status: 200 });
    expect(entry?.log.map((a) => a.status)).toEqual([null, 500, 200]);
    expect(entry?.log[0]?.error).toBeTruthy();
    expect(entry?.log[2]?.response_body).toBe('answer 200');
  });

  it.skipIf(skip)('410 Gone disables the endpoint at once; its other deliveries wait, pending, until it is enabled again', async () => {
    const r = await startReceiver([SECRET], closer);
    await insertEndpoint(store, { id: 'wh_1', url: r.url, secret: SECRET }, clock.now());
    const d = testDispatcher(store, clock, closer, { endpointConcurrency: 1 });
    r.script([410]);
    await insertQueued(store, 2, clock.now(), 'outbox');
    await d.pump();
    expect(r.received).toHaveLength(1);
    const ep = await endpointRow(store, 'wh_1');
    expect(ep.enabled).toBe(0);
    expect(ep.disabled_reason).toBe(`410 Gone from ${r.url}`);
    expect((await deliveryRows(store)).map((x) => x.state)).toEqual(['failed', 'pending']);
    expect(await d.metrics.registry.getSingleMetricAsString('mailroom_webhook_deliveries_total')).toContain('outcome="disabled"} 1');
    await setEndpointFields(store, 'wh_1', { enabled: 1, disabled_reason: null, failing_since: null });
    await d.pump();
    expect((await deliveryRows(store)).map((x) => x.state)).toEqual(['failed', 'succeeded']);
  });

  it.skipIf(skip)('a rotation signs with both secrets, each verifying alone; an expired previous secret stops signing', async () => {
    const old = testSecret(1);
    const r = await startReceiver([old, SECRET], closer);
    await insertEndpoint(store, { id: 'wh_rot', url: r.url, secret: SECRET, previous_secret: old, previous_secret_expires_at: clock.now() + 60_000 }, clock.now());
    await insertEndpoint(store, { id: 'wh_done', url: `${r.url}?done`, secret: SECRET, previous_secret: old, previous_secret_expires_at: clock.now() - 1 }, clock.now());
    const d = testDispatcher(store, clock, closer);
    await message();
    await d.pump();
    const rot = r.received.find((x) => !x.path.includes('done'));
    const done = r.received.find((x) => x.path.includes('done'));
    expect(rot?.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(rot?.verifiedWith.sort()).toEqual([old, SECRET].sort());
    expect(done?.headers['webhook-signature']?.split(' ')).toHaveLength(1);
    expect(done?.verifiedWith).toEqual([SECRET]);
  });

  it.skipIf(skip)('an endpoint for message.delivered gets only those; one for everything gets every event, in sequence', async () => {
    const r = await startReceiver([SECRET], closer);
    await insertEndpoint(store, { id: 'wh_dlv', url: `${r.url}?only`, secret: SECRET, events: ['message.delivered'] }, clock.now());
    await insertEndpoint(store, { id: 'wh_all', url: r.url, secret: SECRET }, clock.now());
    const d = testDispatcher(store, clock, closer);
    const id = await message();
    await store.messages.appendEvent(id, 'delivered', clock.now(), clock.now(), { provider: 'ses', recipient: 'owner@acme.test', status: '250' });
    await d.pump();
    expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
    const only = r.received.filter((x) => x.path.includes('only')).map((x) => x.payload as Body);
    expect(only.map((b) => b.type)).toEqual(['message.delivered']);
    expect(only[0]?.data).toMatchObject({ message_id: id, sequence: 2, recipient: 'owner@acme.test', provider: 'ses', details: { status: '250' } });
    const all = r.received.filter((x) => !x.path.includes('only')).map((x) => x.payload as Body);
    expect(all.map((b) => b.type).sort()).toEqual(['message.delivered', 'message.queued']);
    expect(await store.webhookDeliveries.list('acme', { endpointId: 'wh_dlv' }, 10)).toHaveLength(1);
    expect(await store.webhookDeliveries.list('acme', { eventType: 'message.queued' }, 10)).toHaveLength(1);
  });

  it.skipIf(skip)('a provider event dated an hour ahead goes out at once: its delivery is due, and logged, when it is recorded', async () => {
    const r = await startReceiver([SECRET], closer);
    await insertEndpoint(store, { id: 'wh_1', url: r.url, secret: SECRET, events: ['message.delivered'] }, clock.now());
    const d = testDispatcher(store, clock, closer);
    const id = await message();
    const at = clock.now() + 3_600_000;
    const deps = { clock, metrics: createMetrics(), logger: { warn: () => undefined } };
    await recordProviderEvents(store, deps, { orgId: null, serviceId: null }, [
      { source: 'postmark', eventKey: 'ahead-1', type: 'delivered', at, recipient: 'owner@acme.test', match: { messageId: id } },
    ]);
    await d.pump();
    expect(r.received.map((x) => x.webhookId)).toEqual([`${id}.2`]);
    expect(r.received[0]?.verifiedWith).toEqual([SECRET]);
    expect(r.received[0]?.payload).toMatchObject({ type: 'message.delivered', timestamp: new Date(at).toISOString() });
    const [entry] = await store.webhookDeliveries.list('acme', {}, 10);
    expect(entry).toMatchObject({ state: 'succeeded', created_at: clock.now() });
  });

  it.skipIf(skip)('a schedule used up leaves the delivery failed in the log; failing past disableAfter disables the endpoint', async () => {
    const r = await startReceiver([SECRET], closer);
    r.fallback = 500;
    await insertEndpoint(store, { id: 'wh_1', url: r.url, secret: SECRET }, clock.now());
    const d = testDispatcher(store, clock, closer, { disableAfterMs: 1500 });
    await message();
    for (let i = 0; i < 4; i += 1) {
      await d.pump();
      clock.advance(1000);
    }
    expect(r.received).toHaveLength(3);
    const [entry] = await store.webhookDeliveries.list('acme', { state: 'failed' }, 10);
    expect(entry).toMatchObject({ state: 'failed', attempts: 3, last_status: 500, next_attempt_at: null });
    const ep = await endpointRow(store, 'wh_1');
    expect(ep.enabled).toBe(0);
    expect(ep.disabled_reason).toMatch(/^every delivery failed since /);
    expect(d.warnings.some((w) => w.includes('webhook endpoint disabled'))).toBe(true);
  });

  it.skipIf(skip)('replay of one delivery and of a range keeps the webhook-id; a range adds events sent while the endpoint was disabled', async () => {
    const r = await startReceiver([SECRET], closer);
    await insertEndpoint(store, { id: 'wh_1', url: r.url, secret: SECRET }, clock.now());
    const d = testDispatcher(store, clock, closer);
    const since = clock.now();
    const first = await message();
    await d.pump();
    const [done] = await store.webhookDeliveries.list('acme', {}, 10);
    expect(await store.webhookDeliveries.replayOne('acme', done?.id ?? '', clock.now())).toEqual({ outcome: 'queued', endpointId: 'wh_1', endpointEnabled: true });
    expect(await store.webhookDeliveries.replayOne('other', done?.id ?? '', clock.now())).toEqual({ outcome: 'not_found' });
    await d.pump();
    expect(r.withId(`${first}.1`)).toHaveLength(2);
    expect((await store.webhookDeliveries.get('acme', done?.id ?? ''))?.attempts).toBe(2);

    await setEndpointFields(store, 'wh_1', { enabled: 0, disabled_reason: 'operator' });
    const missed = await message();
    expect(await deliveryRows(store)).toHaveLength(1);
    await setEndpointFields(store, 'wh_1', { enabled: 1, disabled_reason: null });
    clock.advance(10);
    expect(await store.webhookDeliveries.replayRange('acme', 'wh_1', { since, until: clock.now(), onlyFailed: true }, clock.now())).toBe(0);
    expect(await store.webhookDeliveries.replayRange('acme', 'wh_1', { since, until: clock.now(), onlyFailed: false }, clock.now())).toBe(2);
    await d.pump();
    expect(r.withId(`${first}.1`)).toHaveLength(3);
    expect(r.withId(`${missed}.1`)).toHaveLength(1);
    expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
    expect(new Set(r.withId(`${first}.1`).map((x) => x.body)).size).toBe(1);
  });

  it.skipIf(skip)('a test event is posted at once, signed, and logged with its one attempt', async () => {
    const r = await startReceiver([SECRET], closer);
    r.script([503]);
    await insertEndpoint(store, { id: 'wh_1', url: r.url, secret: SECRET }, clock.now());
    const settings = testSettings();
    const http = createWebhookHttp({ policy: settings.urlPolicy, timeoutMs: settings.attemptTimeoutMs });
    closer.defer(() => http.close());
    const failed = await sendTestEvent({ store, clock, http, settings }, 'acme', 'wh_1');
    expect(failed).toMatchObject({ ok: false, status: 503 });
    const ok = await sendTestEvent({ store, clock, http, settings }, 'acme', 'wh_1');
    expect(ok).toMatchObject({ ok: true, status: 200, error: null });
    expect(r.received.map((x) => x.webhookId)).toEqual([`test_${failed.delivery_id.slice(4)}`, `test_${ok.delivery_id.slice(4)}`]);
    expect(r.received[1]?.verifiedWith).toEqual([SECRET]);
    expect(r.received[1]?.payload).toMatchObject({ type: 'webhook.test', data: { organization_id: 'acme', endpoint_id: 'wh_1' } });
    expect(await store.webhookDeliveries.get('acme', ok.delivery_id)).toMatchObject({ state: 'succeeded', event_type: 'webhook.test', attempts: 1 });
    expect(await store.webhookDeliveries.get('acme', failed.delivery_id)).toMatchObject({ state: 'failed', attempts: 1 });
    expect((await endpointRow(store, 'wh_1')).failing_since).toBeNull();
  });
});
