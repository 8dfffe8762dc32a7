import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { expect, it } from 'vitest';
import { row, view } from '../support/delivery.js';
import { expectError } from '../support/http.js';
import { providerEventsCount, recorded, sentMessageHarness, post } from '../support/events/intake.js';
import { describeDialects } from '../support/dialects.js';

const OWNER = 'owner@acme.test';
const AUDIT = 'audit@acme.test';

const pair = (): { privateKey: KeyObject; publicKey: string } => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { privateKey, publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64') };
};

/** SendGrid's two headers for `body`, signed with `key` at `atMs`. */
function signedHeaders(key: KeyObject, body: string, atMs: number): Record<string, string> {
  const timestamp = String(Math.floor(atMs / 1000));
  return {
    'x-twilio-email-event-webhook-timestamp': timestamp,
    'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.from(timestamp + body), { key, dsaEncoding: 'der' }).toString(
      'base64',
    ),
  };
}

describeDialects('SendGrid events through /v1/provider-events, on %s', (dialect, skip) => {
  const sent = sentMessageHarness();
  const account = pair();

  it.skipIf(skip)(
    'a signed batch is recorded: delivered + hard bounce → delivered, the bounced address suppressed; a retry is a duplicate',
    async () => {
      const { t, id, eventsPath } = await sent(dialect, { source: 'sendgrid', public_key: account.publicKey });
      const body = JSON.stringify([
        {
          email: OWNER,
          timestamp: 1767229200,
          event: 'delivered',
          sg_event_id: 'sg-1',
          sg_message_id: 'x1.filter0001.1.0',
          mailroom_message_id: id,
          response: '250 OK',
        },
        {
          email: AUDIT,
          timestamp: 1767229201,
          event: 'bounce',
          type: 'bounce',
          status: '5.1.1',
          reason: '550 5.1.1 unknown',
          sg_event_id: 'sg-2',
          sg_message_id: 'x1.filter0001.1.0',
          mailroom_message_id: id,
        },
        { email: OWNER, timestamp: 1767229202, event: 'open', sg_event_id: 'sg-3', mailroom_message_id: id },
      ]);
      const res = await post(t, eventsPath, body, signedHeaders(account.privateKey, body, t.clock.now()));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ received: 2, recorded: 2, duplicates: 0, unmatched: 0 });
      expect((await row(t.store, id)).status).toBe('delivered');
      expect((await view(t, id)).events.map((e) => e.type)).toEqual(['queued', 'sending', 'sent', 'delivered', 'bounced']);
      expect((await t.store.suppressions.list('acme')).map((x) => [x.email, x.reason])).toEqual([[AUDIT, 'hard_bounce']]);
      const retry = await post(t, eventsPath, body, signedHeaders(account.privateKey, body, t.clock.now()));
      expect(retry.json()).toEqual({ received: 2, recorded: 0, duplicates: 2, unmatched: 0 });
      expect((await recorded(t)).map((e) => e.eventKey)).toEqual(['sg-1', 'sg-2']);
    },
  );

  it.skipIf(skip)('matched by our Message-ID header (smtp-id): a spam report makes the message complained', async () => {
    const { t, id, eventsPath, headerMessageId } = await sent(dialect, { source: 'sendgrid', public_key: account.publicKey });
    const body = JSON.stringify([
      { email: OWNER, timestamp: 1767229200, event: 'spamreport', sg_event_id: 'sg-9', 'smtp-id': headerMessageId },
    ]);
    const res = await post(t, eventsPath, body, signedHeaders(account.privateKey, body, t.clock.now()));
    expect(res.json()).toEqual({ received: 1, recorded: 1, duplicates: 0, unmatched: 0 });
    expect((await row(t.store, id)).status).toBe('complained');
  });

  it.skipIf(skip)(
    'an event without sg_event_id (and a timestamp of 1e300) is recorded under a digest key; the others of its batch too',
    async () => {
      const { t, id, eventsPath } = await sent(dialect, { source: 'sendgrid', public_key: account.publicKey });
      const body = JSON.stringify([
        { email: OWNER, timestamp: 1767229200, event: 'delivered', sg_event_id: 'sg-d', mailroom_message_id: id },
        { email: AUDIT, timestamp: 1e300, event: 'bounce', type: 'bounce', mailroom_message_id: id },
      ]);
      const res = await post(t, eventsPath, body, signedHeaders(account.privateKey, body, t.clock.now()));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ received: 2, recorded: 2, duplicates: 0, unmatched: 0 });
      const events = await recorded(t);
      expect(events.find((e) => e.type === 'delivered')?.eventKey).toBe('sg-d');
      expect(events.find((e) => e.type === 'bounced')).toMatchObject({
        eventKey: expect.stringMatching(/^event:[0-9a-f]{64}$/) as unknown,
        at: t.clock.now(),
      });
      expect((await t.store.suppressions.list('acme')).map((x) => x.email)).toEqual([AUDIT]);
      expect((await view(t, id)).events.map((e) => e.type)).toEqual(['queued', 'sending', 'sent', 'delivered', 'bounced']);
      const retry = await post(t, eventsPath, body, signedHeaders(account.privateKey, body, t.clock.now()));
      expect(retry.json()).toEqual({ received: 2, recorded: 0, duplicates: 2, unmatched: 0 });
    },
  );

  it.skipIf(skip)(
    'forged: bad signature, wrong key, altered body, stale timestamp → 401, nothing recorded, the message untouched',
    async () => {
      const { t, id, eventsPath } = await sent(dialect, { source: 'sendgrid', public_key: account.publicKey });
      const body = JSON.stringify([
        { email: OWNER, timestamp: 1767229200, event: 'spamreport', sg_event_id: 'sg-f', mailroom_message_id: id },
      ]);
      const now = t.clock.now();
      const good = signedHeaders(account.privateKey, body, now);
      const forged: Array<[string, Record<string, string>]> = [
        [body, { ...good, 'x-twilio-email-event-webhook-signature': Buffer.alloc(71, 3).toString('base64') }],
        [body, signedHeaders(pair().privateKey, body, now)],
        [body.replace(OWNER, 'someone@else.test'), good],
        [body, signedHeaders(account.privateKey, body, now - 4 * 86_400_000)],
        [body, {}],
      ];
      for (const [b, headers] of forged) expectError(await post(t, eventsPath, b, headers), 401, 'unauthorized');
      expect(await recorded(t)).toEqual([]);
      expect((await row(t.store, id)).status).toBe('sent');
      expect(await providerEventsCount(t, 'sendgrid', 'rejected')).toBe(forged.length);
    },
  );
});
