import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SnsMessage } from '../../src/events/sources/sns-verify.js';
import { row, view } from '../support/delivery.js';
import { expectError } from '../support/http.js';
import { providerEventsCount, recorded, sentMessageHarness, post, type SentSetup } from '../support/events/intake.js';
import { certOutage, fakeSns, sesRecord, TOPIC, type FakeSns } from '../support/events/sns.js';
import { describeDialects } from '../support/dialects.js';

const OWNER = 'owner@acme.test';
const AUDIT = 'audit@acme.test';

let sns: FakeSns;
beforeAll(async () => {
  sns = await fakeSns();
});
afterAll(async () => sns.close());

/** SNS posts its JSON as text/plain, with its message type in a header. */
const snsPost = (s: SentSetup, m: SnsMessage | Record<string, unknown>) =>
  post(s.t, s.eventsPath, JSON.stringify(m), {
    'content-type': 'text/plain; charset=UTF-8',
    'x-amz-sns-message-type': String(m.Type),
  });

let n = 0;
function notification(message: string, options: { version?: '1' | '2'; certUrl?: string; topic?: string } = {}): SnsMessage {
  n += 1;
  return sns.sign(
    {
      Type: 'Notification',
      MessageId: `route-${n}`,
      TopicArn: options.topic ?? TOPIC,
      Message: message,
      Timestamp: new Date().toISOString(),
    },
    options,
  );
}

describeDialects('SES (SNS) events through /v1/provider-events, on %s', (dialect, skip) => {
  const sent = sentMessageHarness();
  const setup = (events: { source: 'ses'; topic_arns?: string[] } = { source: 'ses' }) =>
    sent(dialect, events, { env: { MAILROOM_SNS_CERT_HOSTS: `sns.*.amazonaws.com,${sns.host}` }, at: Date.now() });

  it.skipIf(skip)('the subscription is confirmed (SubscribeURL fetched), recording nothing', async () => {
    const s = await setup();
    const confirm = sns.sign({
      Type: 'SubscriptionConfirmation',
      MessageId: 'sub-1',
      TopicArn: TOPIC,
      Message: 'confirm',
      Timestamp: new Date().toISOString(),
      SubscribeURL: `${sns.base}/confirm?Token=route-1`,
      Token: 'route-1',
    });
    const res = await snsPost(s, confirm);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ received: 0, recorded: 0, duplicates: 0, unmatched: 0 });
    expect(sns.requests).toContain('/confirm?Token=route-1');
    expect(await recorded(s.t)).toEqual([]);
  });

  it.skipIf(skip)(
    'a Bounce (hard) and a Delivery matched by our Message-ID header: ' +
      'delivered, the bounced address suppressed; SNS retries are duplicates',
    async () => {
      const s = await setup({ source: 'ses', topic_arns: [TOPIC] });
      const mail = {
        destination: [OWNER, AUDIT],
        headers: [{ name: 'Message-ID', value: s.headerMessageId }],
        commonHeaders: { messageId: s.headerMessageId },
      };
      const bounce = notification(
        sesRecord(
          'Bounce',
          'notification',
          {
            bounceType: 'Permanent',
            bounceSubType: 'General',
            bouncedRecipients: [{ emailAddress: AUDIT, status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 unknown' }],
          },
          mail,
        ),
        { version: '1' },
      );
      const delivery = notification(
        sesRecord('Delivery', 'notification', { recipients: [OWNER], smtpResponse: '250 2.0.0 OK' }, mail),
      );
      expect((await snsPost(s, bounce)).json()).toEqual({ received: 1, recorded: 1, duplicates: 0, unmatched: 0 });
      expect((await snsPost(s, delivery)).json()).toEqual({ received: 1, recorded: 1, duplicates: 0, unmatched: 0 });
      expect((await snsPost(s, bounce)).json()).toEqual({ received: 1, recorded: 0, duplicates: 1, unmatched: 0 });
      expect((await row(s.t.store, s.id)).status).toBe('delivered');
      expect((await view(s.t, s.id)).events.map((e) => e.type)).toEqual(['queued', 'sending', 'sent', 'bounced', 'delivered']);
      expect((await s.t.store.suppressions.list('acme')).map((x) => [x.email, x.reason])).toEqual([[AUDIT, 'hard_bounce']]);
      expect((await recorded(s.t))[0]).toMatchObject({
        source: 'ses',
        type: 'bounced',
        bounceType: 'hard',
        recipient: AUDIT,
        status: '5.1.1',
      });
    },
  );

  it.skipIf(skip)('an event-publishing Complaint tagged with our message id makes the message complained', async () => {
    const s = await setup();
    const complaint = notification(
      sesRecord(
        'Complaint',
        'event',
        { complainedRecipients: [{ emailAddress: OWNER }], complaintFeedbackType: 'abuse' },
        {
          messageId: 'ses-unknown-to-us',
          headers: [],
          commonHeaders: {},
          tags: { mailroom_message_id: [s.id] },
        },
      ),
    );
    expect((await snsPost(s, complaint)).json()).toEqual({ received: 1, recorded: 1, duplicates: 0, unmatched: 0 });
    expect((await row(s.t.store, s.id)).status).toBe('complained');
  });

  it.skipIf(skip)(
    'forged: bad signature, altered Message, wrong key, foreign or ' +
      'http cert URL, topic not allowed → 401, nothing recorded or fetched',
    async () => {
      const s = await setup({ source: 'ses', topic_arns: [TOPIC] });
      const message = sesRecord(
        'Complaint',
        'notification',
        { complainedRecipients: [{ emailAddress: OWNER }] },
        { tags: { mailroom_message_id: [s.id] } },
      );
      const good = notification(message);
      const port = sns.host.split(':')[1] ?? '';
      const before = sns.requests.length;
      const forged: Array<SnsMessage | Record<string, unknown>> = [
        { ...good, Signature: Buffer.alloc(256, 9).toString('base64') },
        { ...good, Message: message.replace(OWNER, 'victim@acme.test') },
        notification(message, { certUrl: 'https://evil.test/cert.pem' }),
        notification(message, { certUrl: `http://localhost:${port}/cert.pem` }),
        notification(message, { certUrl: `https://sns.us-east-1.amazonaws.com@${sns.host}/cert.pem` }),
        notification(message, { topic: `${TOPIC}-other` }),
      ];
      for (const m of forged) expectError(await snsPost(s, m), 401, 'unauthorized');
      // Only the allowed certificate was ever fetched (once: cached), never a forged URL.
      expect(sns.requests.slice(before).filter((r) => r !== '/cert.pem')).toEqual([]);
      // Signed by our key but naming the other certificate on the allowed host: the wrong key.
      expectError(await snsPost(s, { ...good, SigningCertURL: sns.otherCertUrl }), 401, 'unauthorized');
      expect(await recorded(s.t)).toEqual([]);
      expect((await row(s.t.store, s.id)).status).toBe('sent');
      expect(await providerEventsCount(s.t, 'ses', 'rejected')).toBe(forged.length + 1);
    },
  );

  it.skipIf(skip)(
    "the certificate host is down: 503 service_unavailable, nothing recorded or counted as rejected; SNS's retry after it is " +
      'back is recorded',
    async () => {
      const outage = await certOutage(await (await fetch(sns.certUrl)).text());
      try {
        const s = await sent(
          dialect,
          { source: 'ses' },
          { env: { MAILROOM_SNS_CERT_HOSTS: `sns.*.amazonaws.com,${outage.host}` }, at: Date.now() },
        );
        const complaint = notification(
          sesRecord(
            'Complaint',
            'notification',
            { complainedRecipients: [{ emailAddress: OWNER }] },
            { tags: { mailroom_message_id: [s.id] } },
          ),
          { certUrl: `${outage.base}/flaky.pem` },
        );
        expect(expectError(await snsPost(s, complaint), 503, 'service_unavailable').message).toMatch(
          /certificate could not be fetched/,
        );
        expect(await recorded(s.t)).toEqual([]);
        expect((await row(s.t.store, s.id)).status).toBe('sent');
        expect(await providerEventsCount(s.t, 'ses', 'rejected')).toBe(0);
        outage.recover();
        expect((await snsPost(s, complaint)).json()).toEqual({ received: 1, recorded: 1, duplicates: 0, unmatched: 0 });
        expect((await row(s.t.store, s.id)).status).toBe('complained');
      } finally {
        await outage.close();
      }
    },
  );
});
