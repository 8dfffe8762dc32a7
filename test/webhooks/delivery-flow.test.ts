import { expect, it } from 'vitest';
import { recordProviderEvents } from '../../src/events/record.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { sendTestEvent } from '../../src/webhooks/test-event.js';
import { createWebhookHttp } from '../../src/webhooks/http-post.js';
import { insertQueued } from '../support/delivery.js';
import {
  deliveryRows,
  endpointRow,
  insertEndpoint,
  setEndpointFields,
  testDispatcher,
  testSettings,
  useWebhookStore,
} from '../support/webhooks/dispatch.js';
import { startReceiver, testSecret } from '../support/webhooks/receiver.js';
import { describeDialects } from '../support/dialects.js';

const SECRET = testSecret(7);

interface Body {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

describeDialects('webhook deliveries on %s', (dialect, skip) => {
  const t = useWebhookStore(dialect, skip);

  const message = async () => (await insertQueued(t.store, 1, t.clock.now(), 'outbox'))[0] ?? '';

  it.skipIf(t.skip)(
    'a receiver down, then 500, then 200: nothing lost, the same webhook-id and body each time, all in the log',
    async () => {
      const r = await startReceiver([SECRET], t.closer);
      await insertEndpoint(t.store, { id: 'wh_1', url: r.url, secret: SECRET }, t.clock.now());
      const d = testDispatcher(t.store, t.clock, t.closer);
      await r.down();
      const id = await message();
      await d.pump();
      expect(r.received).toHaveLength(0);
      await r.up();
      r.script([500]);
      t.clock.advance(1000);
      await d.pump();
      t.clock.advance(1000);
      await d.pump();
      expect(r.received.map((x) => x.answered)).toEqual([500, 200]);
      expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
      expect(new Set(r.received.map((x) => x.webhookId))).toEqual(new Set([`${id}.1`]));
      expect(r.received[0]?.body).toBe(r.received[1]?.body);
      const body = r.received[1]?.payload as Body;
      expect(body).toMatchObject({
        type: 'message.queued',
        data: {
          message_id: id,
          organization_id: 'acme',
          template_id: 'contact',
          service_id: 'outbox',
          status: 'queued',
          sequence: 1,
        },
      });
      const [entry] = await t.store.webhookDeliveries.list('acme', {}, 10);
      expect(entry).toMatchObject({ state: 'succeeded', attempts: 3, webhook_id: `${id}.1`, last_status: 200 });
      expect(entry?.log.map((a) => a.status)).toEqual([null, 500, 200]);
      expect(entry?.log[0]?.error).toBeTruthy();
      expect(entry?.log[2]?.response_body).toBe('answer 200');
    },
  );

  it.skipIf(t.skip)(
    '410 Gone disables the endpoint at once; its other deliveries wait, pending, until it is enabled again',
    async () => {
      const r = await startReceiver([SECRET], t.closer);
      await insertEndpoint(t.store, { id: 'wh_1', url: r.url, secret: SECRET }, t.clock.now());
      const d = testDispatcher(t.store, t.clock, t.closer, { endpointConcurrency: 1 });
      r.script([410]);
      await insertQueued(t.store, 2, t.clock.now(), 'outbox');
      await d.pump();
      expect(r.received).toHaveLength(1);
      const ep = await endpointRow(t.store, 'wh_1');
      expect(ep.enabled).toBe(0);
      expect(ep.disabled_reason).toBe(`410 Gone from ${r.url}`);
      expect((await deliveryRows(t.store)).map((x) => x.state)).toEqual(['failed', 'pending']);
      expect(await d.metrics.registry.getSingleMetricAsString('mailroom_webhook_deliveries_total')).toContain(
        'outcome="disabled"} 1',
      );
      await setEndpointFields(t.store, 'wh_1', { enabled: 1, disabled_reason: null, failing_since: null });
      await d.pump();
      expect((await deliveryRows(t.store)).map((x) => x.state)).toEqual(['failed', 'succeeded']);
    },
  );

  it.skipIf(t.skip)(
    'a rotation signs with both secrets, each verifying alone; an expired previous secret stops signing',
    async () => {
      const old = testSecret(1);
      const r = await startReceiver([old, SECRET], t.closer);
      await insertEndpoint(
        t.store,
        { id: 'wh_rot', url: r.url, secret: SECRET, previous_secret: old, previous_secret_expires_at: t.clock.now() + 60_000 },
        t.clock.now(),
      );
      await insertEndpoint(
        t.store,
        {
          id: 'wh_done',
          url: `${r.url}?done`,
          secret: SECRET,
          previous_secret: old,
          previous_secret_expires_at: t.clock.now() - 1,
        },
        t.clock.now(),
      );
      const d = testDispatcher(t.store, t.clock, t.closer);
      await message();
      await d.pump();
      const rot = r.received.find((x) => !x.path.includes('done'));
      const done = r.received.find((x) => x.path.includes('done'));
      expect(rot?.headers['webhook-signature']?.split(' ')).toHaveLength(2);
      expect(rot?.verifiedWith.sort()).toEqual([old, SECRET].sort());
      expect(done?.headers['webhook-signature']?.split(' ')).toHaveLength(1);
      expect(done?.verifiedWith).toEqual([SECRET]);
    },
  );

  it.skipIf(t.skip)(
    'an endpoint for message.delivered gets only those; one for everything gets every event, in sequence',
    async () => {
      const r = await startReceiver([SECRET], t.closer);
      await insertEndpoint(
        t.store,
        { id: 'wh_dlv', url: `${r.url}?only`, secret: SECRET, events: ['message.delivered'] },
        t.clock.now(),
      );
      await insertEndpoint(t.store, { id: 'wh_all', url: r.url, secret: SECRET }, t.clock.now());
      const d = testDispatcher(t.store, t.clock, t.closer);
      const id = await message();
      await t.store.messages.appendEvent(id, 'delivered', t.clock.now(), t.clock.now(), {
        provider: 'ses',
        recipient: 'owner@acme.test',
        status: '250',
      });
      await d.pump();
      expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
      const only = r.received.filter((x) => x.path.includes('only')).map((x) => x.payload as Body);
      expect(only.map((b) => b.type)).toEqual(['message.delivered']);
      expect(only[0]?.data).toMatchObject({
        message_id: id,
        sequence: 2,
        recipient: 'owner@acme.test',
        provider: 'ses',
        details: { status: '250' },
      });
      const all = r.received.filter((x) => !x.path.includes('only')).map((x) => x.payload as Body);
      expect(all.map((b) => b.type).sort()).toEqual(['message.delivered', 'message.queued']);
      expect(await t.store.webhookDeliveries.list('acme', { endpointId: 'wh_dlv' }, 10)).toHaveLength(1);
      expect(await t.store.webhookDeliveries.list('acme', { eventType: 'message.queued' }, 10)).toHaveLength(1);
    },
  );

  it.skipIf(t.skip)(
    'a provider event dated an hour ahead goes out at once: its delivery is due, and logged, when it is recorded',
    async () => {
      const r = await startReceiver([SECRET], t.closer);
      await insertEndpoint(t.store, { id: 'wh_1', url: r.url, secret: SECRET, events: ['message.delivered'] }, t.clock.now());
      const d = testDispatcher(t.store, t.clock, t.closer);
      const id = await message();
      const at = t.clock.now() + 3_600_000;
      const deps = { clock: t.clock, metrics: createMetrics(), logger: { warn: () => undefined } };
      await recordProviderEvents(t.store, deps, { orgId: null, serviceId: null }, [
        {
          source: 'postmark',
          eventKey: 'ahead-1',
          type: 'delivered',
          at,
          recipient: 'owner@acme.test',
          match: { messageId: id },
        },
      ]);
      await d.pump();
      expect(r.received.map((x) => x.webhookId)).toEqual([`${id}.2`]);
      expect(r.received[0]?.verifiedWith).toEqual([SECRET]);
      expect(r.received[0]?.payload).toMatchObject({ type: 'message.delivered', timestamp: new Date(at).toISOString() });
      const [entry] = await t.store.webhookDeliveries.list('acme', {}, 10);
      expect(entry).toMatchObject({ state: 'succeeded', created_at: t.clock.now() });
    },
  );

  it.skipIf(t.skip)(
    'a schedule used up leaves the delivery failed in the log; failing past disableAfter disables the endpoint',
    async () => {
      const r = await startReceiver([SECRET], t.closer);
      r.fallback = 500;
      await insertEndpoint(t.store, { id: 'wh_1', url: r.url, secret: SECRET }, t.clock.now());
      const d = testDispatcher(t.store, t.clock, t.closer, { disableAfterMs: 1500 });
      await message();
      for (let i = 0; i < 4; i += 1) {
        await d.pump();
        t.clock.advance(1000);
      }
      expect(r.received).toHaveLength(3);
      const [entry] = await t.store.webhookDeliveries.list('acme', { state: 'failed' }, 10);
      expect(entry).toMatchObject({ state: 'failed', attempts: 3, last_status: 500, next_attempt_at: null });
      const ep = await endpointRow(t.store, 'wh_1');
      expect(ep.enabled).toBe(0);
      expect(ep.disabled_reason).toMatch(/^every delivery failed since /);
      expect(d.warnings.some((w) => w.includes('webhook endpoint disabled'))).toBe(true);
    },
  );

  it.skipIf(t.skip)(
    'replay of one delivery and of a range keeps the webhook-id; a range adds events sent while the endpoint was disabled',
    async () => {
      const r = await startReceiver([SECRET], t.closer);
      await insertEndpoint(t.store, { id: 'wh_1', url: r.url, secret: SECRET }, t.clock.now());
      const d = testDispatcher(t.store, t.clock, t.closer);
      const since = t.clock.now();
      const first = await message();
      await d.pump();
      const [done] = await t.store.webhookDeliveries.list('acme', {}, 10);
      expect(await t.store.webhookDeliveries.replayOne('acme', done?.id ?? '', t.clock.now())).toEqual({
        outcome: 'queued',
        endpointId: 'wh_1',
        endpointEnabled: true,
      });
      expect(await t.store.webhookDeliveries.replayOne('other', done?.id ?? '', t.clock.now())).toEqual({ outcome: 'not_found' });
      await d.pump();
      expect(r.withId(`${first}.1`)).toHaveLength(2);
      expect((await t.store.webhookDeliveries.get('acme', done?.id ?? ''))?.attempts).toBe(2);

      await setEndpointFields(t.store, 'wh_1', { enabled: 0, disabled_reason: 'operator' });
      const missed = await message();
      expect(await deliveryRows(t.store)).toHaveLength(1);
      await setEndpointFields(t.store, 'wh_1', { enabled: 1, disabled_reason: null });
      t.clock.advance(10);
      expect(
        await t.store.webhookDeliveries.replayRange(
          'acme',
          'wh_1',
          { since, until: t.clock.now(), onlyFailed: true },
          t.clock.now(),
        ),
      ).toBe(0);
      expect(
        await t.store.webhookDeliveries.replayRange(
          'acme',
          'wh_1',
          { since, until: t.clock.now(), onlyFailed: false },
          t.clock.now(),
        ),
      ).toBe(2);
      await d.pump();
      expect(r.withId(`${first}.1`)).toHaveLength(3);
      expect(r.withId(`${missed}.1`)).toHaveLength(1);
      expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
      expect(new Set(r.withId(`${first}.1`).map((x) => x.body)).size).toBe(1);
    },
  );

  it.skipIf(t.skip)('a test event is posted at once, signed, and logged with its one attempt', async () => {
    const r = await startReceiver([SECRET], t.closer);
    r.script([503]);
    await insertEndpoint(t.store, { id: 'wh_1', url: r.url, secret: SECRET }, t.clock.now());
    const settings = testSettings();
    const http = createWebhookHttp({ policy: settings.urlPolicy, timeoutMs: settings.attemptTimeoutMs });
    t.closer.defer(() => http.close());
    const failed = await sendTestEvent({ store: t.store, clock: t.clock, http, settings }, 'acme', 'wh_1');
    expect(failed).toMatchObject({ ok: false, status: 503 });
    const ok = await sendTestEvent({ store: t.store, clock: t.clock, http, settings }, 'acme', 'wh_1');
    expect(ok).toMatchObject({ ok: true, status: 200, error: null });
    expect(r.received.map((x) => x.webhookId)).toEqual([
      `test_${failed.delivery_id.slice(4)}`,
      `test_${ok.delivery_id.slice(4)}`,
    ]);
    expect(r.received[1]?.verifiedWith).toEqual([SECRET]);
    expect(r.received[1]?.payload).toMatchObject({
      type: 'webhook.test',
      data: { organization_id: 'acme', endpoint_id: 'wh_1' },
    });
    expect(await t.store.webhookDeliveries.get('acme', ok.delivery_id)).toMatchObject({
      state: 'succeeded',
      event_type: 'webhook.test',
      attempts: 1,
    });
    expect(await t.store.webhookDeliveries.get('acme', failed.delivery_id)).toMatchObject({ state: 'failed', attempts: 1 });
    expect((await endpointRow(t.store, 'wh_1')).failing_since).toBeNull();
  });
});
