import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { sesSource } from '../../src/events/sources/ses.js';
import { hostAllowed, urlAllowed, type SnsMessage } from '../../src/events/sources/sns-verify.js';
import { IntakeMalformed, IntakeRejected, type IntakeRequest, type WebhookSourceHandler } from '../../src/events/types.js';
import { certOutage, type CertOutage, fakeSns, sesRecord, TOPIC, type FakeSns } from '../support/events/sns.js';

let sns: FakeSns;
let ses: WebhookSourceHandler;
let NOW = 0;

beforeAll(async () => {
  sns = await fakeSns();
  NOW = Date.now();
  ses = sesSource({ certHosts: ['sns.*.amazonaws.com', sns.host] });
});
afterAll(async () => sns.close());

const request = (body: unknown, headers: Record<string, string> = {}): IntakeRequest => ({
  headers,
  rawBody: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
  url: 'https://mailroom.test/v1/provider-events/tok',
});

let seq = 0;
function notification(
  message: string,
  options: { version?: '1' | '2'; certUrl?: string; subject?: string; topic?: string } = {},
): SnsMessage {
  seq += 1;
  return sns.sign(
    {
      Type: 'Notification',
      MessageId: `sns-msg-${seq}`,
      TopicArn: options.topic ?? TOPIC,
      Message: message,
      Timestamp: '2026-11-25T10:00:05.000Z',
      ...(options.subject === undefined ? {} : { Subject: options.subject }),
    },
    options,
  );
}

const rejected = (p: Promise<unknown>) => expect(p).rejects.toBeInstanceOf(IntakeRejected);
const unavailable = (p: Promise<unknown>) =>
  expect(p).rejects.toMatchObject({ name: 'ApiError', code: 'service_unavailable', status: 503 });

describe('SES through SNS: verified notifications', () => {
  it.each(['1', '2'] as const)(
    'SignatureVersion %s: a Bounce notification gives one event per recipient (Permanent = hard)',
    async (version) => {
      const msg = notification(
        sesRecord('Bounce', 'notification', {
          bounceType: 'Permanent',
          bounceSubType: 'General',
          timestamp: '2026-11-25T10:00:03.000Z',
          feedbackId: 'fb-1',
          bouncedRecipients: [
            { emailAddress: 'A@Example.org', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' },
            { emailAddress: 'b@example.org', status: '5.1.1' },
          ],
        }),
        { version, subject: 'Amazon SES Email Event Notification' },
      );
      const { events } = await ses.verifyAndParse(request(msg, { 'x-amz-sns-message-type': 'Notification' }), {}, NOW);
      expect(events).toHaveLength(2);
      expect(events[0]).toMatchObject({
        source: 'ses',
        type: 'bounced',
        bounceType: 'hard',
        recipient: 'a@example.org',
        status: '5.1.1',
        reason: 'smtp; 550 5.1.1 user unknown',
        at: Date.parse('2026-11-25T10:00:03.000Z'),
        match: { providerMessageId: '0100018c-ses-id-000000', headerMessageId: '<ours@mailroom>' },
      });
      expect(events[0]?.eventKey).toBe(`${msg.MessageId}:a@example.org`);
      expect(events[1]?.eventKey).toBe(`${msg.MessageId}:b@example.org`);
    },
  );

  it.each([
    ['Transient', 'soft'],
    ['Undetermined', 'soft'],
    ['Permanent', 'hard'],
  ] as const)('event publishing Bounce %s → %s', async (sesType, ours) => {
    const msg = notification(
      sesRecord('Bounce', 'event', { bounceType: sesType, bouncedRecipients: [{ emailAddress: 'a@example.org' }] }),
    );
    const { events } = await ses.verifyAndParse(request(msg), {}, NOW);
    expect(events.map((e) => [e.type, e.bounceType])).toEqual([['bounced', ours]]);
  });

  it.each(['notification', 'event'] as const)('%s format: Delivery, Complaint, DeliveryDelay and Reject', async (format) => {
    const parse = async (kind: string, detail: Record<string, unknown>) =>
      (await ses.verifyAndParse(request(notification(sesRecord(kind, format, detail))), {}, NOW)).events;
    const delivered = await parse('Delivery', {
      timestamp: '2026-11-25T10:00:01.000Z',
      recipients: ['a@example.org', 'b@example.org'],
      smtpResponse: '250 ok',
    });
    expect(delivered.map((e) => [e.type, e.recipient, e.reason])).toEqual([
      ['delivered', 'a@example.org', '250 ok'],
      ['delivered', 'b@example.org', '250 ok'],
    ]);
    const complained = await parse('Complaint', {
      complainedRecipients: [{ emailAddress: 'b@example.org' }],
      complaintFeedbackType: 'abuse',
    });
    expect(complained.map((e) => [e.type, e.recipient])).toEqual([['complained', 'b@example.org']]);
    const delayed = await parse('DeliveryDelay', {
      delayType: 'MailboxFull',
      delayedRecipients: [{ emailAddress: 'a@example.org', status: '4.2.2' }],
    });
    expect(delayed.map((e) => [e.type, e.recipient, e.status])).toEqual([['deferred', 'a@example.org', '4.2.2']]);
    const failed = await parse('Reject', { reason: 'Bad content' });
    expect(failed.map((e) => [e.type, e.recipient, e.reason])).toEqual([['failed', null, 'Bad content']]);
  });

  it('our message id from an SES message tag; kinds we do not follow give no events', async () => {
    const tagged = notification(
      sesRecord('Delivery', 'event', { recipients: ['a@example.org'] }, { tags: { mailroom_message_id: ['msg_abc123'] } }),
    );
    expect((await ses.verifyAndParse(request(tagged), {}, NOW)).events[0]?.match.messageId).toBe('msg_abc123');
    const open = notification(sesRecord('Open', 'event', {}));
    expect((await ses.verifyAndParse(request(open), {}, NOW)).events).toEqual([]);
  });

  it('a verified Message that is not an SES record is malformed (400), not rejected', async () => {
    await expect(ses.verifyAndParse(request(notification('not json')), {}, NOW)).rejects.toBeInstanceOf(IntakeMalformed);
    await expect(ses.verifyAndParse(request(notification('{"hello":1}')), {}, NOW)).rejects.toBeInstanceOf(IntakeMalformed);
  });

  it('the certificate is fetched once per URL (cached)', async () => {
    const source = sesSource({ certHosts: [sns.host] });
    const before = sns.requests.filter((r) => r === '/cert.pem').length;
    for (let i = 0; i < 3; i += 1) await source.verifyAndParse(request(notification(sesRecord('Open', 'event', {}))), {}, NOW);
    expect(sns.requests.filter((r) => r === '/cert.pem').length - before).toBe(1);
  });
});

describe('SES through SNS: forged and disallowed → IntakeRejected', () => {
  const bounce = () =>
    sesRecord('Bounce', 'notification', { bounceType: 'Permanent', bouncedRecipients: [{ emailAddress: 'a@example.org' }] });

  it('bad signature, altered body, wrong key, mismatched type header', async () => {
    const good = notification(bounce());
    await rejected(ses.verifyAndParse(request({ ...good, Signature: Buffer.alloc(256, 7).toString('base64') }), {}, NOW));
    await rejected(
      ses.verifyAndParse(request({ ...good, Message: good.Message.replace('a@example.org', 'victim@example.org') }), {}, NOW),
    );
    await rejected(ses.verifyAndParse(request({ ...good, TopicArn: `${TOPIC}-other` }), {}, NOW));
    await rejected(
      ses.verifyAndParse(request({ ...good, SignatureVersion: good.SignatureVersion === '1' ? '2' : '1' }), {}, NOW),
    );
    // Signed with our key but naming another (allowed) certificate: the wrong key.
    await rejected(ses.verifyAndParse(request({ ...good, SigningCertURL: sns.otherCertUrl }), {}, NOW));
    await rejected(ses.verifyAndParse(request(good, { 'x-amz-sns-message-type': 'SubscriptionConfirmation' }), {}, NOW));
    await rejected(ses.verifyAndParse(request('not json'), {}, NOW));
    await rejected(ses.verifyAndParse(request({ ...good, SignatureVersion: '3' }), {}, NOW));
  });

  it('a cert URL on a foreign host, a private address, http to an unlisted host, userinfo, a redirect: not fetched', async () => {
    const before = sns.requests.length;
    const forged = [
      'https://evil.test/cert.pem',
      'https://10.0.0.1/cert.pem',
      'https://169.254.169.254/latest/meta-data',
      'http://sns.us-east-1.amazonaws.com/cert.pem',
      `http://127.0.0.2:${sns.host.split(':')[1]}/cert.pem`,
      'https://sns.us-east-1.amazonaws.com@evil.test/cert.pem',
      `https://sns.us-east-1.amazonaws.com:443@${sns.host}/cert.pem`,
      'https://sns.us-east-1.amazonaws.com.evil.test/cert.pem',
      'https://sns.amazonaws.com/cert.pem',
      'https://sns.a.b.amazonaws.com/cert.pem',
      'https://sns.us-east-1.amazonaws.com:8443/cert.pem',
      'file:///etc/passwd',
    ];
    for (const certUrl of forged) {
      await rejected(ses.verifyAndParse(request(notification(bounce(), { certUrl })), {}, NOW));
    }
    expect(sns.requests.length).toBe(before);
    // On the allowed host, a redirect is not followed: a certificate that could not be fetched
    // (503, below), never one fetched from where the redirect pointed.
    await unavailable(ses.verifyAndParse(request(notification(bounce(), { certUrl: `${sns.base}/redirect.pem` })), {}, NOW));
    expect(sns.requests.slice(before)).toEqual(['/redirect.pem']);
  });

  it('topic_arns: a topic not listed is refused before any fetch; a listed one passes', async () => {
    const before = sns.requests.length;
    const source = sesSource({ certHosts: [sns.host] });
    await rejected(
      source.verifyAndParse(request(notification(bounce(), { topic: `${TOPIC}-other` })), { topic_arns: [TOPIC] }, NOW),
    );
    await rejected(source.verifyAndParse(request(notification(bounce())), { topic_arns: 'not a list' }, NOW));
    expect(sns.requests.length).toBe(before);
    const ok = await source.verifyAndParse(request(notification(bounce())), { topic_arns: [TOPIC] }, NOW);
    expect(ok.events).toHaveLength(1);
    // An empty list restricts nothing, as the service config documents.
    expect((await source.verifyAndParse(request(notification(bounce())), { topic_arns: [] }, NOW)).events).toHaveLength(1);
  });

  it('a certificate outside its validity period is refused', async () => {
    await rejected(ses.verifyAndParse(request(notification(bounce())), {}, NOW + 10 * 86_400_000));
  });
});

describe('SES through SNS: a certificate that cannot be had just now → 503 (SNS retries), never 401', () => {
  let outage: CertOutage;
  beforeAll(async () => {
    outage = await certOutage(await (await fetch(sns.certUrl)).text());
  });
  afterAll(async () => outage.close());
  const bounce = () =>
    sesRecord('Bounce', 'notification', { bounceType: 'Permanent', bouncedRecipients: [{ emailAddress: 'a@example.org' }] });

  it('connection refused, 5xx, a garbled PEM, a timeout', async () => {
    const source = sesSource({ certHosts: [outage.host, outage.closedHost] });
    for (const certUrl of [`http://${outage.closedHost}/cert.pem`, `${outage.base}/500.pem`, `${outage.base}/garbled.pem`]) {
      await unavailable(source.verifyAndParse(request(notification(bounce(), { certUrl })), {}, NOW));
    }
    const timingOut = sesSource({
      certHosts: [sns.host],
      fetchText: () => Promise.reject(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    });
    await unavailable(timingOut.verifyAndParse(request(notification(bounce())), {}, NOW));
  });

  it('a failure is not cached: once the host is back, the same message verifies', async () => {
    const source = sesSource({ certHosts: [outage.host] });
    const msg = notification(bounce(), { certUrl: `${outage.base}/flaky.pem` });
    await unavailable(source.verifyAndParse(request(msg), {}, NOW));
    await unavailable(source.verifyAndParse(request(msg), {}, NOW));
    outage.recover();
    expect((await source.verifyAndParse(request(msg), {}, NOW)).events).toHaveLength(1);
    expect(outage.requests.filter((r) => r === '/flaky.pem')).toHaveLength(3);
  });

  it('attacker: the host rule, the signature and the validity period stay 401 even while the host is down', async () => {
    const source = sesSource({ certHosts: [outage.host] });
    const before = outage.requests.length;
    await rejected(source.verifyAndParse(request(notification(bounce(), { certUrl: 'https://evil.test/500.pem' })), {}, NOW));
    await rejected(
      source.verifyAndParse(
        request(notification(bounce(), { certUrl: `http://127.0.0.2:${outage.host.split(':')[1]}/500.pem` })),
        {},
        NOW,
      ),
    );
    expect(outage.requests.length).toBe(before);
    // The certificate is had but the signature or the date is wrong.
    outage.recover();
    const good = notification(bounce(), { certUrl: `${outage.base}/flaky.pem` });
    await rejected(source.verifyAndParse(request({ ...good, Signature: Buffer.alloc(256, 7).toString('base64') }), {}, NOW));
    await rejected(source.verifyAndParse(request(good), {}, NOW + 10 * 86_400_000));
  });
});

describe('SNS subscription confirmation', () => {
  const confirmation = (
    subscribeUrl: string,
    type: 'SubscriptionConfirmation' | 'UnsubscribeConfirmation' = 'SubscriptionConfirmation',
  ) => {
    seq += 1;
    return sns.sign({
      Type: type,
      MessageId: `sub-${seq}`,
      TopicArn: TOPIC,
      Message: 'You have chosen to subscribe…',
      Timestamp: '2026-11-25T10:00:00.000Z',
      SubscribeURL: subscribeUrl,
      Token: 'tok-123',
    });
  };

  it('is verified, records nothing, and its follow-up fetches SubscribeURL', async () => {
    const result = await ses.verifyAndParse(
      request(confirmation(`${sns.base}/confirm?Action=ConfirmSubscription&Token=tok-123`)),
      {},
      NOW,
    );
    expect(result.events).toEqual([]);
    expect(sns.requests).not.toContain('/confirm?Action=ConfirmSubscription&Token=tok-123');
    await result.followUp?.();
    expect(sns.requests).toContain('/confirm?Action=ConfirmSubscription&Token=tok-123');
  });

  it('a confirmation the SubscribeURL refuses is 503 service_unavailable (SNS sends it again)', async () => {
    const result = await ses.verifyAndParse(request(confirmation(`${sns.base}/nope`)), {}, NOW);
    await expect(result.followUp?.()).rejects.toMatchObject({ name: 'ApiError', code: 'service_unavailable' });
  });

  it('a SubscribeURL on a foreign host is refused; a forged Token is refused; an unsubscribe does nothing', async () => {
    await rejected(ses.verifyAndParse(request(confirmation('https://evil.test/confirm')), {}, NOW));
    await rejected(ses.verifyAndParse(request({ ...confirmation(`${sns.base}/confirm`), Token: 'other' }), {}, NOW));
    const unsub = await ses.verifyAndParse(request(confirmation(`${sns.base}/confirm`, 'UnsubscribeConfirmation')), {}, NOW);
    expect(unsub).toEqual({ events: [] });
  });
});

describe('MAILROOM_SNS_CERT_HOSTS', () => {
  it('defaults to sns.*.amazonaws.com, where * is one label and the port is the default', () => {
    expect(loadConfig({}).snsCertHosts).toEqual(['sns.*.amazonaws.com']);
    expect(hostAllowed('sns.*.amazonaws.com', 'sns.eu-west-1.amazonaws.com', '')).toBe(true);
    expect(hostAllowed('sns.*.amazonaws.com', 'sns.eu-west-1.amazonaws.com', '444')).toBe(false);
    expect(hostAllowed('sns.*.amazonaws.com', 'sns..amazonaws.com', '')).toBe(false);
    expect(urlAllowed('http://localhost:9/x', ['localhost:9'])).toBeDefined();
    expect(urlAllowed('http://localhost:9/x', ['*:9'])).toBeUndefined();
  });

  it('parses a list and refuses patterns too broad or not host-like', () => {
    expect(
      loadConfig({ MAILROOM_SNS_CERT_HOSTS: 'sns.*.amazonaws.com, sns.*.amazonaws.com.cn,127.0.0.1:8123' }).snsCertHosts,
    ).toEqual(['sns.*.amazonaws.com', 'sns.*.amazonaws.com.cn', '127.0.0.1:8123']);
    for (const bad of ['*', '*.com', '*.*.amazonaws', 'https://sns.x.amazonaws.com', 'sns.*.amazonaws.com/x']) {
      expect(() => loadConfig({ MAILROOM_SNS_CERT_HOSTS: bad })).toThrow(/MAILROOM_SNS_CERT_HOSTS/);
    }
  });
});
