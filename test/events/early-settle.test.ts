import { expect, it } from 'vitest';
import { admin } from '../support/admin.js';
import {
  CONTACT_TEMPLATE as WITH_CC,
  deliveryHarness,
  row,
  seedSmtpOrg,
  send,
  smtpService,
  view,
  type MessageView,
} from '../support/delivery.js';
import { smtpError } from '../support/smtp-sink.js';
import { databaseOf } from '../support/db.js';
import { CONTACT_TEMPLATE } from '../support/seed.js';
import type { TestApp } from '../support/app.js';
import { insertEndpoint } from '../support/webhooks/dispatch.js';
import { testSecret } from '../support/webhooks/receiver.js';
import { heldRelay } from '../support/held-relay.js';
import { basic } from '../support/events/signing.js';
import { post } from '../support/events/intake.js';
import { suppressionRows } from '../support/events/record.js';
import { describeDialects } from '../support/dialects.js';

/** Postmark's id for the message, as its relay answers DATA (`250 … queued as <id>`). */
const PM_ID = 'b7bc2f4a-e38e-4336-af7d-e6c392c2f817';
const OWNER = 'owner@acme.test';
const AUDIT = 'audit@acme.test';
const PM = { source: 'postmark' as const, username: 'hook', password: 'pm-secret-password' };

type FullView = MessageView & { recipients?: Array<{ address: string; state: string }> };

/**
 * Issue 25, 8: a provider event that arrives while its message is still `sending` (Postmark
 * reported a HardBounce 11 ms before the worker wrote `sent`) is applied in the transaction
 * that settles the attempt. The race is made every time: the relay holds its reply to DATA
 * until the test has posted the bounce to the real intake route, so the worker has claimed and
 * sent the message and the provider id is not written yet.
 */
describeDialects('a provider event that arrives while its message is sending, on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  /** One recipient (the seeded template's To only) unless `cc`; a Postmark events block, a webhook endpoint. */
  async function setup(cc = false) {
    const t = await h.app();
    // With the Cc: refused for now on its first RCPT, so the first attempt leaves it owed a retry.
    const rcpt = (address: string, n: number) =>
      cc && address === AUDIT && n === 1 ? smtpError(451, '4.2.1 Mailbox busy, try later') : undefined;
    const relay = await heldRelay(h.closer, `2.0.0 Ok: queued as ${PM_ID}`, { rcpt });
    await seedSmtpOrg(t.store, smtpService(relay.port, { events: PM }), { templates: [cc ? WITH_CC : CONTACT_TEMPLATE] });
    await insertEndpoint(t.store, { id: 'hook', url: 'https://hooks.example.test/in', secret: testSecret(7) }, t.clock.now());
    const shown = await admin(t, 'GET', '/organizations/acme/services/smtp');
    expect(shown.statusCode, shown.body).toBe(200);
    const eventsPath = new URL(shown.json<{ events_url: string }>().events_url).pathname;
    const { worker } = h.worker(t);
    return { t, relay, worker, eventsPath };
  }

  const hardBounce = (more: Record<string, unknown> = {}) =>
    JSON.stringify({
      RecordType: 'Bounce',
      ID: 4242,
      Type: 'HardBounce',
      MessageID: PM_ID,
      Email: OWNER,
      BouncedAt: '2026-01-01T00:00:01Z',
      Details: 'smtp;550 5.1.1 The email account does not exist',
      ...more,
    });

  async function bounceWebhooks(t: TestApp, id: string) {
    return databaseOf(t.store)
      .selectFrom('webhook_deliveries')
      .select(['event_type', 'message_status'])
      .where('message_id', '=', id)
      .where('event_type', '=', 'message.bounced')
      .execute();
  }

  async function expectBounced(t: TestApp, id: string) {
    const v = (await view(t, id)) as FullView;
    expect(v.status).toBe('bounced');
    expect(v.recipients).toEqual([expect.objectContaining({ address: OWNER, state: 'bounced' })]);
    expect(v.events.filter((e) => e.type === 'bounced')).toHaveLength(1);
    expect(await suppressionRows(t.store)).toEqual([{ email: OWNER, reason: 'hard_bounce', message_id: id }]);
  }

  it.skipIf(skip)(
    'naming only the provider id, which the worker has not written yet: applied when the worker writes sent',
    async () => {
      const { t, relay, worker, eventsPath } = await setup();
      const id = await send(t);
      const running = worker.runOnce();
      await relay.received();
      expect((await row(t.store, id)).status).toBe('sending');

      const res = await post(t, eventsPath, hardBounce(), basic(PM.username, PM.password));
      expect(res.statusCode, res.body).toBe(200);
      // Nothing carries that id yet: stored unmatched, for the settle to find.
      expect(res.json()).toMatchObject({ received: 1, recorded: 0, unmatched: 1 });

      relay.release();
      expect(await running).toBe(1);
      expect((await row(t.store, id)).provider_message_id).toBe(PM_ID);
      await expectBounced(t, id);
      // One webhook for the bounce, carrying the status it left the message in.
      expect(await bounceWebhooks(t, id)).toEqual([{ event_type: 'message.bounced', message_status: 'bounced' }]);

      // The provider retries the same event: a duplicate, and nothing more happens.
      const retried = await post(t, eventsPath, hardBounce(), basic(PM.username, PM.password));
      expect(retried.json()).toMatchObject({ duplicates: 1 });
      expect(await bounceWebhooks(t, id)).toHaveLength(1);
    },
  );

  it.skipIf(skip)(
    'naming our id (Postmark metadata): on the timeline at once, applied to states when the worker writes sent',
    async () => {
      const { t, relay, worker, eventsPath } = await setup();
      const id = await send(t);
      const running = worker.runOnce();
      await relay.received();
      expect((await row(t.store, id)).status).toBe('sending');

      const res = await post(
        t,
        eventsPath,
        hardBounce({ Metadata: { mailroom_message_id: id } }),
        basic(PM.username, PM.password),
      );
      expect(res.json()).toMatchObject({ received: 1, recorded: 1 });
      expect((await row(t.store, id)).status).toBe('sending');

      relay.release();
      expect(await running).toBe(1);
      await expectBounced(t, id);
      expect(await bounceWebhooks(t, id)).toHaveLength(1);
    },
  );

  it.skipIf(skip)(
    'naming only the provider id, while the Cc is owed a retry: ' +
      'taken in when the attempt settles, applied when the retry is sent',
    async () => {
      const { t, relay, worker, eventsPath } = await setup(true);
      const id = await send(t);
      const running = worker.runOnce();
      await relay.received();
      const res = await post(t, eventsPath, hardBounce(), basic(PM.username, PM.password));
      expect(res.json()).toMatchObject({ received: 1, unmatched: 1 });
      relay.release();
      expect(await running).toBe(1);

      // Settled apart, back in the queue for the Cc: the bounce is its message's now (timeline,
      // suppression, one webhook), its recipient's state waits for the message to leave.
      expect((await row(t.store, id)).status).toBe('queued');
      expect((await view(t, id)).events.filter((e) => e.type === 'bounced')).toHaveLength(1);
      expect(await suppressionRows(t.store)).toEqual([{ email: OWNER, reason: 'hard_bounce', message_id: id }]);

      t.clock.advance(60_000);
      expect(await worker.runOnce()).toBe(1);
      const v = (await view(t, id)) as FullView;
      expect(Object.fromEntries((v.recipients ?? []).map((r) => [r.address, r.state]))).toEqual({
        [OWNER]: 'bounced',
        [AUDIT]: 'sent',
      });
      // One recipient bounced, the other got it: the message reads sent (the bounced rule wants every one).
      expect(v.status).toBe('sent');
      expect(v.events.filter((e) => e.type === 'bounced')).toHaveLength(1);
      expect(await bounceWebhooks(t, id)).toHaveLength(1);
    },
  );
});
