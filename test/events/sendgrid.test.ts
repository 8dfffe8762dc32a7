import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sendgridMessageId, sendgridSource } from '../../src/events/sources/sendgrid.js';
import { IntakeMalformed, IntakeRejected, type IntakeRequest } from '../../src/events/types.js';

/** A SendGrid account's signing pair, as the console would show the public half (base64 DER SPKI). */
function keyPair(): { privateKey: KeyObject; publicKey: string; pem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    privateKey,
    publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    pem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
}

const account = keyPair();
const NOW = Date.parse('2026-11-25T12:00:00Z');
const TS = String(NOW / 1000);

function signed(body: string, options: { key?: KeyObject; timestamp?: string } = {}): IntakeRequest {
  const timestamp = options.timestamp ?? TS;
  const signature = sign('sha256', Buffer.from(timestamp + body), {
    key: options.key ?? account.privateKey,
    dsaEncoding: 'der',
  }).toString('base64');
  return {
    headers: { 'x-twilio-email-event-webhook-signature': signature, 'x-twilio-email-event-webhook-timestamp': timestamp },
    rawBody: Buffer.from(body),
    url: 'https://mailroom.test/v1/provider-events/tok',
  };
}

const batch = JSON.stringify([
  { email: 'A@example.org', timestamp: 1795600000, event: 'processed', sg_event_id: 'ev-0', sg_message_id: 'x.filter1' },
  {
    email: 'A@example.org',
    timestamp: 1795600001,
    event: 'delivered',
    sg_event_id: 'ev-1',
    sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
    'smtp-id': '<ours@mailroom>',
    response: '250 OK',
    mailroom_message_id: 'msg_abc123',
  },
  {
    email: 'b@example.org',
    timestamp: 1795600002,
    event: 'bounce',
    type: 'bounce',
    status: '5.1.1',
    reason: '550 5.1.1 no such user',
    sg_event_id: 'ev-2',
    sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.1.2.0',
  },
  {
    email: 'c@example.org',
    timestamp: 1795600003,
    event: 'bounce',
    type: 'blocked',
    status: '4.0.0',
    reason: 'blocked by policy',
    sg_event_id: 'ev-3',
    sg_message_id: '14c5d75ce93.dfd.64b469',
  },
  {
    email: 'd@example.org',
    timestamp: 1795600004,
    event: 'deferred',
    attempt: '2',
    response: '421 try later',
    sg_event_id: 'ev-4',
    sg_message_id: '14c5d75ce93.dfd.64b469',
  },
  {
    email: 'e@example.org',
    timestamp: 1795600005,
    event: 'dropped',
    reason: 'Bounced Address',
    sg_event_id: 'ev-5',
    sg_message_id: '14c5d75ce93.dfd.64b469',
  },
  {
    email: 'f@example.org',
    timestamp: 1795600006,
    event: 'spamreport',
    sg_event_id: 'ev-6',
    sg_message_id: '14c5d75ce93.dfd.64b469',
  },
  { email: 'f@example.org', timestamp: 1795600007, event: 'open', sg_event_id: 'ev-7' },
]);

const rejected = (p: Promise<unknown>) => expect(p).rejects.toBeInstanceOf(IntakeRejected);

describe('SendGrid Event Webhook', () => {
  it.each([
    ['base64 DER (as the console shows it)', account.publicKey],
    ['PEM', account.pem],
  ])('a signed batch verifies with the key as %s', async (_label, key) => {
    const { events } = await sendgridSource.verifyAndParse(signed(batch), { public_key: key }, NOW);
    expect(events.map((e) => [e.eventKey, e.type, e.recipient, e.bounceType ?? null])).toEqual([
      ['ev-1', 'delivered', 'a@example.org', null],
      ['ev-2', 'bounced', 'b@example.org', 'hard'],
      ['ev-3', 'bounced', 'c@example.org', 'soft'],
      ['ev-4', 'deferred', 'd@example.org', null],
      ['ev-5', 'failed', 'e@example.org', null],
      ['ev-6', 'complained', 'f@example.org', null],
    ]);
    expect(events[0]).toMatchObject({
      source: 'sendgrid',
      at: 1795600001000,
      reason: '250 OK',
      match: { messageId: 'msg_abc123', providerMessageId: '14c5d75ce93.dfd.64b469', headerMessageId: '<ours@mailroom>' },
    });
    expect(events[1]).toMatchObject({ status: '5.1.1', reason: '550 5.1.1 no such user' });
  });

  it('sg_message_id loses its .filter suffix', () => {
    expect(sendgridMessageId('abc.def.filter0001.1.2.0')).toBe('abc.def');
    expect(sendgridMessageId('abc.def')).toBe('abc.def');
    expect(sendgridMessageId(3)).toBeUndefined();
  });

  it('forged: bad signature, wrong key, altered body, other timestamp, missing headers → IntakeRejected', async () => {
    const settings = { public_key: account.publicKey };
    const good = signed(batch);
    await rejected(
      sendgridSource.verifyAndParse(
        {
          ...good,
          headers: { ...good.headers, 'x-twilio-email-event-webhook-signature': Buffer.alloc(70, 1).toString('base64') },
        },
        settings,
        NOW,
      ),
    );
    await rejected(sendgridSource.verifyAndParse(signed(batch, { key: keyPair().privateKey }), settings, NOW));
    await rejected(
      sendgridSource.verifyAndParse(
        { ...good, rawBody: Buffer.from(batch.replace('b@example.org', 'victim@example.org')) },
        settings,
        NOW,
      ),
    );
    await rejected(
      sendgridSource.verifyAndParse(
        { ...good, headers: { ...good.headers, 'x-twilio-email-event-webhook-timestamp': String(NOW / 1000 + 1) } },
        settings,
        NOW,
      ),
    );
    await rejected(sendgridSource.verifyAndParse({ ...good, headers: {} }, settings, NOW));
  });

  it('stale: older than the 72-hour retry window, or ahead by more than 5 minutes; a 2-hour-old retry passes', async () => {
    const settings = { public_key: account.publicKey };
    await rejected(sendgridSource.verifyAndParse(signed(batch, { timestamp: String(NOW / 1000 - 4 * 86_400) }), settings, NOW));
    await rejected(sendgridSource.verifyAndParse(signed(batch, { timestamp: String(NOW / 1000 + 600) }), settings, NOW));
    const retry = await sendgridSource.verifyAndParse(signed(batch, { timestamp: String(NOW / 1000 - 7200) }), settings, NOW);
    expect(retry.events).toHaveLength(6);
  });

  it('a key that is not P-256, or no key configured → IntakeRejected', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .publicKey.export({ format: 'der', type: 'spki' })
      .toString('base64');
    const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' })
      .publicKey.export({ format: 'pem', type: 'spki' })
      .toString();
    await rejected(sendgridSource.verifyAndParse(signed(batch), { public_key: rsa }, NOW));
    await rejected(sendgridSource.verifyAndParse(signed(batch), { public_key: p384 }, NOW));
    await rejected(sendgridSource.verifyAndParse(signed(batch), { public_key: 'not a key' }, NOW));
    await rejected(sendgridSource.verifyAndParse(signed(batch), {}, NOW));
  });

  it('a verified body that is not a batch is malformed (400)', async () => {
    const settings = { public_key: account.publicKey };
    for (const body of ['{"event":"delivered"}', 'nope', '[1]']) {
      await expect(sendgridSource.verifyAndParse(signed(body), settings, NOW)).rejects.toBeInstanceOf(IntakeMalformed);
    }
  });

  it('an event without sg_event_id gets a digest key (the same event, the same key); the rest of the batch is read', async () => {
    const settings = { public_key: account.publicKey };
    const odd = { email: 'z@example.org', timestamp: 1795600010, event: 'bounce', type: 'bounce', sg_message_id: 'm1' };
    const body = JSON.stringify([
      odd,
      { email: 'y@example.org', timestamp: 1795600011, event: 'delivered', sg_event_id: 'ev-9' },
    ]);
    const first = (await sendgridSource.verifyAndParse(signed(body), settings, NOW)).events;
    expect(first.map((e) => [e.type, e.recipient])).toEqual([
      ['bounced', 'z@example.org'],
      ['delivered', 'y@example.org'],
    ]);
    expect(first[0]?.eventKey).toMatch(/^event:[0-9a-f]{64}$/);
    expect(first[1]?.eventKey).toBe('ev-9');
    // Re-batched by SendGrid with its keys in another order: still the same key.
    const again = JSON.stringify([
      { sg_message_id: 'm1', type: 'bounce', event: 'bounce', timestamp: 1795600010, email: 'z@example.org' },
    ]);
    expect((await sendgridSource.verifyAndParse(signed(again), settings, NOW)).events[0]?.eventKey).toBe(first[0]?.eventKey);
    const other = JSON.stringify([{ ...odd, email: 'w@example.org' }]);
    expect((await sendgridSource.verifyAndParse(signed(other), settings, NOW)).events[0]?.eventKey).not.toBe(first[0]?.eventKey);
  });

  it('a timestamp that is absurd (1e300, negative, a string, before 2000, days ahead) is the receipt time', async () => {
    const settings = { public_key: account.publicKey };
    const times: unknown[] = [1e300, -5, 'NaN', '1e300', 0, 946684799, NOW / 1000 + 2 * 86_400, 1795600012];
    const body = JSON.stringify(
      times.map((timestamp, i) => ({ email: 'a@example.org', timestamp, event: 'delivered', sg_event_id: `t-${i}` })),
    );
    const { events } = await sendgridSource.verifyAndParse(signed(body), settings, NOW);
    expect(events.map((e) => e.at)).toEqual([NOW, NOW, NOW, NOW, NOW, NOW, NOW, 1795600012000]);
  });
});
