import { expect, it } from 'vitest';
import {
  CONTACT_TEMPLATE,
  deliveryHarness,
  PARAMS,
  privateHeaders,
  row,
  seedSmtpOrg,
  send,
  smtpService,
  view,
  type MessageView,
} from '../support/delivery.js';
import { keysOf, skOf } from '../support/orgs.js';
import { housekeeping } from '../../src/delivery/housekeeping.js';
import type { TestApp } from '../support/app.js';
import { applyProviderEvents } from '../../src/events/record.js';
import { counter, ev, providerEventRows, recorder, suppressionRows } from '../support/events/record.js';
import { describeDialects } from '../support/dialects.js';
import { lockWaitsOn } from '../support/db.js';
import { waitFor } from '../support/smtp-sink.js';

// Issue 12, "One event model": recordProviderEvents over messages sent through the real send
// path and worker. CONTACT_TEMPLATE sends To owner@acme.test and Cc audit@acme.test.
const OWNER = 'owner@acme.test';
const AUDIT = 'audit@acme.test';
const DAY = 86_400_000;

interface TimelineEntry {
  type: string;
  at: string;
  recipient?: string;
  reason?: string;
  provider?: string;
  bounce_type?: string;
  status?: string;
  details?: Record<string, unknown>;
}
type FullView = Omit<MessageView, 'events'> & {
  events: TimelineEntry[];
  recipients?: Array<{ address: string; state: string; reason?: string }>;
};

const stateOf = (v: FullView) => Object.fromEntries((v.recipients ?? []).map((r) => [r.address, r.state]));

describeDialects('events after hand-off, on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  /** An app whose message was sent to the sink; returns its id. */
  async function sentMessage(): Promise<{ t: TestApp; id: string }> {
    const { t } = await h.smtpApp();
    const { worker } = h.worker(t);
    const id = await send(t);
    expect(await worker.runOnce()).toBe(1);
    expect((await row(t.store, id)).status).toBe('sent');
    return { t, id };
  }

  it.skipIf(skip)(
    'delivered to every recipient: status delivered, each recipient delivered, flat timeline fields, counters, notifier',
    async () => {
      const { t, id } = await sentMessage();
      const r = recorder(t.store, t.clock);
      expect(
        await r.record([
          ev('delivered', id, OWNER, { status: '250', reason: '250 2.0.0 OK' }),
          ev('delivered', id, 'AUDIT@acme.test'),
        ]),
      ).toEqual(['recorded', 'recorded']);
      const v = (await view(t, id)) as FullView;
      expect(v.status).toBe('delivered');
      expect(stateOf(v)).toEqual({ [OWNER]: 'delivered', [AUDIT]: 'delivered' });
      expect(v.events.map((e) => e.type)).toEqual(['queued', 'sending', 'sent', 'delivered', 'delivered']);
      expect(v.events[3]).toMatchObject({
        type: 'delivered',
        at: '2026-01-01T01:00:00.000Z',
        recipient: OWNER,
        provider: 'postmark',
        status: '250',
        reason: '250 2.0.0 OK',
      });
      expect(v.events[4]?.recipient).toBe(AUDIT);
      expect(await counter(r.metrics, 'mailroom_events_delivered_total', { source: 'postmark' })).toBe(2);
      expect(await counter(r.metrics, 'mailroom_provider_events_total', { source: 'postmark', outcome: 'recorded' })).toBe(2);
      expect(r.notified.map((x) => [x.messageId, x.orgId, x.type, x.recipient])).toEqual([
        [id, 'acme', 'delivered', OWNER],
        [id, 'acme', 'delivered', AUDIT],
      ]);
      expect(await suppressionRows(t.store)).toEqual([]);
    },
  );

  it.skipIf(skip)(
    'out of order: a complaint before its delivery ends complained; the late delivery is on the timeline and moves nothing back',
    async () => {
      const { t, id } = await sentMessage();
      const r = recorder(t.store, t.clock);
      expect(await r.record([ev('complained', id, OWNER)])).toEqual(['recorded']);
      expect((await row(t.store, id)).status).toBe('complained');
      expect(await r.record([ev('delivered', id, OWNER), ev('delivered', id, AUDIT)])).toEqual(['recorded', 'recorded']);
      const v = (await view(t, id)) as FullView;
      expect(v.status).toBe('complained');
      expect(stateOf(v)).toEqual({ [OWNER]: 'complained', [AUDIT]: 'delivered' });
      expect(v.events.map((e) => e.type)).toEqual(['queued', 'sending', 'sent', 'complained', 'delivered', 'delivered']);
      expect(await suppressionRows(t.store)).toEqual([{ email: OWNER, reason: 'complaint', message_id: id }]);
      expect(await counter(r.metrics, 'mailroom_events_complained_total', { source: 'postmark' })).toBe(1);
    },
  );

  it.skipIf(skip)('the same event twice is recorded once; the second is a duplicate', async () => {
    const { t, id } = await sentMessage();
    const r = recorder(t.store, t.clock);
    const e = ev('delivered', id, OWNER);
    expect(await r.record([e, e])).toEqual(['recorded', 'duplicate']);
    expect(await r.record([e])).toEqual(['duplicate']);
    const v = (await view(t, id)) as FullView;
    expect(v.events.filter((x) => x.type === 'delivered')).toHaveLength(1);
    expect(await providerEventRows(t.store)).toHaveLength(1);
    expect(await counter(r.metrics, 'mailroom_provider_events_total', { source: 'postmark', outcome: 'duplicate' })).toBe(2);
    expect(r.notified).toHaveLength(1);
  });

  it.skipIf(skip)(
    'unmatched: stored with no message, counted, logged at warn with the ids; another organization cannot reach the message',
    async () => {
      const { t, id } = await sentMessage();
      const r = recorder(t.store, t.clock);
      const stray = ev('bounced', 'msg_nope', OWNER, {
        bounceType: 'hard',
        match: { providerMessageId: 'pm-123', headerMessageId: '<x@y>' },
      });
      // A verified source of another organization naming acme's message by our id: not matched.
      const foreign = ev('complained', id, OWNER);
      expect(await r.record([stray])).toEqual(['unmatched']);
      expect(await r.record([foreign], { orgId: 'other', serviceId: 'svc' })).toEqual(['unmatched']);
      expect((await row(t.store, id)).status).toBe('sent');
      expect(await suppressionRows(t.store)).toEqual([]);
      expect(await providerEventRows(t.store)).toEqual([
        expect.objectContaining({
          event_key: stray.eventKey,
          message_id: null,
          org_id: 'acme',
          service_id: 'smtp',
          type: 'bounced',
          recipient: OWNER,
        }),
        expect.objectContaining({ event_key: foreign.eventKey, message_id: null, org_id: 'other' }),
      ]);
      const warns = r.logger.entries.filter((e) => e.level === 'warn');
      expect(warns).toHaveLength(2);
      expect(warns[0]?.obj).toMatchObject({
        source: 'postmark',
        event_key: stray.eventKey,
        match: { providerMessageId: 'pm-123', headerMessageId: '<x@y>' },
      });
      expect(await counter(r.metrics, 'mailroom_provider_events_total', { source: 'postmark', outcome: 'unmatched' })).toBe(2);
      expect(r.notified).toEqual([]);
    },
  );

  it.skipIf(skip)(
    "retention takes a message's provider events along, and unmatched ones by when they were received",
    async () => {
      const { t, id } = await sentMessage();
      const r = recorder(t.store, t.clock);
      await r.record([ev('delivered', id, OWNER), ev('delivered', 'msg_gone', OWNER, { eventKey: 'old-stray' })]);
      expect(await providerEventRows(t.store)).toHaveLength(2);
      t.clock.advance(2 * DAY);
      await r.record([ev('bounced', 'msg_gone', OWNER, { eventKey: 'new-stray' })]);
      // One day of retention, two days later: the message, its event and the old stray go.
      await housekeeping({ store: t.store, retentionDays: 1 }, t.clock.now());
      expect((await providerEventRows(t.store)).map((e) => [e.event_key, e.message_id])).toEqual([['new-stray', null]]);
      await housekeeping({ store: t.store, retentionDays: 1 }, t.clock.now() + 2 * DAY);
      expect(await providerEventRows(t.store)).toEqual([]);
    },
  );

  it.skipIf(skip)(
    "dedupe is per service: another organization's service posting the same event key first claims nothing of ours",
    async () => {
      const { t, id } = await sentMessage();
      const sink = await h.sink(t);
      await seedSmtpOrg(t.store, smtpService(sink.port, { id: 'mail' }), {
        id: 'globex',
        name: 'Globex',
        keys: keysOf('globex'),
      });
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/send',
        headers: { authorization: `Bearer ${skOf('globex')}` },
        payload: { template_id: 'contact', template_params: PARAMS },
      });
      expect(res.statusCode, res.body).toBe(202);
      const theirs = (res.json() as { message_id: string }).message_id;
      const r = recorder(t.store, t.clock);
      // Postmark bounce ids are sequential: globex, with valid credentials of its own, posts acme's next key first.
      const key = 'Bounce:1001';
      expect(
        await r.record([ev('bounced', theirs, OWNER, { eventKey: key, bounceType: 'hard' })], {
          orgId: 'globex',
          serviceId: 'mail',
        }),
      ).toEqual(['recorded']);
      expect(await r.record([ev('bounced', id, OWNER, { eventKey: key, bounceType: 'hard' })])).toEqual(['recorded']);
      expect(await suppressionRows(t.store)).toEqual([{ email: OWNER, reason: 'hard_bounce', message_id: id }]);
      // Within one service a retry is still a duplicate.
      expect(await r.record([ev('bounced', id, OWNER, { eventKey: key, bounceType: 'hard' })])).toEqual(['duplicate']);
      expect((await providerEventRows(t.store)).map((e) => [e.event_key, e.org_id, e.service_id])).toEqual([
        [key, 'globex', 'mail'],
        [key, 'acme', 'smtp'],
      ]);
    },
  );

  it.skipIf(skip)('matched by the provider message id, then by our Message-ID header (with or without brackets)', async () => {
    const { t, id } = await sentMessage();
    const header = (await row(t.store, id)).header_message_id;
    const r = recorder(t.store, t.clock);
    expect(await r.record([ev('deferred', id, OWNER, { match: { headerMessageId: header.slice(1, -1) } })])).toEqual([
      'recorded',
    ]);
    expect(await r.record([ev('deferred', id, OWNER, { match: { headerMessageId: header } })])).toEqual(['recorded']);
    const v = (await view(t, id)) as FullView;
    expect(v.events.filter((e) => e.type === 'deferred')).toHaveLength(2);
    // Deferrals are timeline entries only.
    expect(v.status).toBe('sent');
    expect(stateOf(v)).toEqual({ [OWNER]: 'sent', [AUDIT]: 'sent' });
  });

  it.skipIf(skip)(
    'a partial bounce: one recipient hard-bounces, the other is ' +
      'delivered → delivered; bounced only once every recipient hard-bounced',
    async () => {
      const { t, id } = await sentMessage();
      const r = recorder(t.store, t.clock);
      await r.record([ev('bounced', id, OWNER, { bounceType: 'hard', status: '5.1.1', reason: '550 5.1.1 no such user' })]);
      expect((await row(t.store, id)).status).toBe('sent');
      await r.record([ev('delivered', id, AUDIT)]);
      let v = (await view(t, id)) as FullView;
      expect(v.status).toBe('delivered');
      expect(stateOf(v)).toEqual({ [OWNER]: 'bounced', [AUDIT]: 'delivered' });
      expect(v.events.find((e) => e.type === 'bounced')).toMatchObject({
        recipient: OWNER,
        bounce_type: 'hard',
        status: '5.1.1',
        reason: '550 5.1.1 no such user',
        provider: 'postmark',
      });
      // A late bounce of the delivered recipient (the remote accepted, then bounced): every recipient bounced.
      await r.record([ev('bounced', id, AUDIT, { bounceType: 'hard' })]);
      v = (await view(t, id)) as FullView;
      expect(v.status).toBe('bounced');
      expect(await suppressionRows(t.store)).toEqual([
        { email: AUDIT, reason: 'hard_bounce', message_id: id },
        { email: OWNER, reason: 'hard_bounce', message_id: id },
      ]);
      expect(await counter(r.metrics, 'mailroom_events_bounced_total', { source: 'postmark', type: 'hard' })).toBe(2);
    },
  );

  it.skipIf(skip)(
    "two recipients' hard bounces recorded at the same time: each sees the other, the message ends bounced",
    async () => {
      const { t, id } = await sentMessage();
      const r = recorder(t.store, t.clock);
      await Promise.all([
        r.record([ev('bounced', id, OWNER, { bounceType: 'hard' })]),
        r.record([ev('bounced', id, AUDIT, { bounceType: 'hard' })]),
      ]);
      const v = (await view(t, id)) as FullView;
      expect(v.status).toBe('bounced');
      expect(stateOf(v)).toEqual({ [OWNER]: 'bounced', [AUDIT]: 'bounced' });
    },
  );

  it.skipIf(skip || dialect !== 'postgres')(
    'PostgreSQL: an event about a message another transaction is recording waits for it (the row lock), so no outcome is lost',
    async () => {
      const { t, id } = await sentMessage();
      const r = recorder(t.store, t.clock);
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let recordedFirst: () => void = () => {};
      const firstHoldsRow = new Promise<void>((resolve) => {
        recordedFirst = resolve;
      });
      // The first transaction records the owner's bounce (locking the message row) and stays open until released.
      const first = t.store.transaction(async (tx) => {
        await applyProviderEvents(tx, t.clock.now(), { orgId: 'acme', serviceId: 'smtp' }, [
          ev('bounced', id, OWNER, { bounceType: 'hard' }),
        ]);
        recordedFirst();
        await gate;
      });
      await firstHoldsRow;
      const second = r.record([ev('bounced', id, AUDIT, { bounceType: 'hard' })]);
      // The race, seen rather than assumed: the second is queued behind the first's lock on the
      // message row (without the lock it would not wait, and would miss the owner's bounce).
      try {
        await waitFor(
          async () => (await lockWaitsOn(t.store, 'messages')) === 1,
          10_000,
          'the second event to wait on the message row',
        );
      } finally {
        release();
      }
      await Promise.all([first, second]);
      expect((await row(t.store, id)).status).toBe('bounced');
    },
  );

  it.skipIf(skip)(
    'a soft bounce adds nothing: no suppression, no state change, on the timeline with bounce_type soft',
    async () => {
      const { t, id } = await sentMessage();
      const r = recorder(t.store, t.clock);
      await r.record([ev('bounced', id, OWNER, { bounceType: 'soft', status: '4.2.2', reason: 'mailbox full' })]);
      const v = (await view(t, id)) as FullView;
      expect(v.status).toBe('sent');
      expect(stateOf(v)).toEqual({ [OWNER]: 'sent', [AUDIT]: 'sent' });
      expect(v.events.at(-1)).toMatchObject({ type: 'bounced', bounce_type: 'soft', recipient: OWNER });
      expect(await suppressionRows(t.store)).toEqual([]);
      expect(await counter(r.metrics, 'mailroom_events_bounced_total', { source: 'postmark', type: 'soft' })).toBe(1);
    },
  );

  it.skipIf(skip)('a hard bounce suppresses the recipient: the next send to it gets 451 recipient_suppressed', async () => {
    const { t, id } = await sentMessage();
    const r = recorder(t.store, t.clock);
    await r.record([ev('bounced', id, OWNER, { bounceType: 'hard' })]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/send',
      headers: privateHeaders,
      payload: { template_id: 'contact', template_params: { name: 'A', email: 'a@example.org', message: 'again' } },
    });
    expect(res.statusCode, res.body).toBe(451);
    expect(res.json()).toMatchObject({ error: { code: 'recipient_suppressed' } });
  });

  it.skipIf(skip)(
    'a provider reject (failed) marks the recipient failed and suppresses nothing; every recipient rejected → failed',
    async () => {
      const { t, id } = await sentMessage();
      const r = recorder(t.store, t.clock);
      await r.record([ev('failed', id, OWNER, { reason: 'virus detected' })]);
      expect((await row(t.store, id)).status).toBe('sent');
      await r.record([ev('failed', id, AUDIT)]);
      const v = (await view(t, id)) as FullView;
      expect(v.status).toBe('failed');
      expect(stateOf(v)).toEqual({ [OWNER]: 'failed', [AUDIT]: 'failed' });
      expect(await suppressionRows(t.store)).toEqual([]);
      // A delivery reported later still says more than the reject: forward, to delivered.
      await r.record([ev('delivered', id, AUDIT)]);
      expect((await row(t.store, id)).status).toBe('delivered');
    },
  );

  it.skipIf(skip)(
    'an event naming no recipient applies to a message with one; names no address outside the message',
    async () => {
      const t = await h.app();
      const sink = await h.sink(t);
      await seedSmtpOrg(t.store, smtpService(sink.port), { templates: [{ ...CONTACT_TEMPLATE, cc: '' }] });
      const { worker } = h.worker(t);
      const id = await send(t);
      await worker.runOnce();
      const r = recorder(t.store, t.clock);
      // An address the message never had: on the timeline, but no suppression and no state.
      await r.record([ev('complained', id, 'stranger@example.net')]);
      expect(await suppressionRows(t.store)).toEqual([]);
      expect((await row(t.store, id)).status).toBe('sent');
      await r.record([ev('bounced', id, null, { bounceType: 'hard' })]);
      expect((await row(t.store, id)).status).toBe('bounced');
      expect(await suppressionRows(t.store)).toEqual([{ email: OWNER, reason: 'hard_bounce', message_id: id }]);
    },
  );

  it.skipIf(skip)('an event before the message left (still queued) is on the timeline and moves nothing', async () => {
    const { t } = await h.smtpApp();
    const id = await send(t);
    const r = recorder(t.store, t.clock);
    expect(await r.record([ev('delivered', id, OWNER)])).toEqual(['recorded']);
    const v = (await view(t, id)) as FullView;
    expect(v.status).toBe('queued');
    expect(v.events.map((e) => e.type)).toEqual(['queued', 'delivered']);
  });

  it.skipIf(skip)('GET /v1/history?status= finds delivered, bounced and complained messages', async () => {
    const { t } = await h.smtpApp();
    const { worker } = h.worker(t);
    const ids = [await send(t), await send(t), await send(t), await send(t)];
    await worker.runOnce();
    const r = recorder(t.store, t.clock);
    const [d, b, c, s] = ids as [string, string, string, string];
    await r.record([
      ev('delivered', d, OWNER),
      ev('bounced', b, OWNER, { bounceType: 'hard' }),
      ev('bounced', b, AUDIT, { bounceType: 'hard' }),
      ev('complained', c, AUDIT),
    ]);
    const find = async (status: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/v1/history?status=${status}`, headers: privateHeaders });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { items: Array<{ message_id: string; status: string }> }).items.map((i) => i.message_id);
    };
    expect(await find('delivered')).toEqual([d]);
    expect(await find('bounced')).toEqual([b]);
    expect(await find('complained')).toEqual([c]);
    expect(await find('sent')).toEqual([s]);
  });
});
