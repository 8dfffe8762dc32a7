import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { expectError } from '../support/http.js';
import { basic, mailgunSignature, newSvixSecret, svixHeaders } from '../support/events/signing.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { providerEventsCount, recorded, post, serviceWithEvents } from '../support/events/intake.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Postmark, Mailgun and Resend events signed as each provider signs them, and the attacker's
 * versions of each (no or wrong credentials, a forged or altered signature, a wrong key, a stale
 * timestamp, a replayed token): those are 401 and reach nothing.
 */
describeDialects('webhook sources on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const nothingRecorded = async () => expect(await recorded(t)).toEqual([]);

  describe('postmark', () => {
    const creds = { username: 'pm-hook', password: randomBytes(16).toString('hex') };
    const bounce = (type: string, id: number) =>
      JSON.stringify({
        RecordType: 'Bounce',
        ID: id,
        Type: type,
        TypeCode: 1,
        MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
        Email: 'Zaphod@Example.com',
        BouncedAt: '2026-01-01T00:00:00Z',
        Details: 'smtp;550 5.1.1 unknown user',
        Metadata: { mailroom_message_id: 'msg_abc123' },
      });

    it.skipIf(skip)(
      'HTTP Basic credentials admit Delivery, Bounce (hard / soft per type) and SpamComplaint; no message: unmatched, 2xx',
      async () => {
        const path = await serviceWithEvents(t, 'pm', { source: 'postmark', ...creds });
        const auth = basic(creds.username, creds.password);
        expect((await post(t, path, bounce('HardBounce', 1), auth)).json()).toEqual({
          received: 1,
          recorded: 0,
          duplicates: 0,
          unmatched: 1,
        });
        expect((await post(t, path, bounce('SoftBounce', 2), auth)).statusCode).toBe(200);
        expect((await post(t, path, bounce('Transient', 3), auth)).statusCode).toBe(200);
        expect((await post(t, path, bounce('AutoResponder', 4), auth)).json()).toMatchObject({ received: 0 });
        expect(
          (
            await post(
              t,
              path,
              JSON.stringify({
                RecordType: 'SpamComplaint',
                ID: 5,
                Type: 'SpamComplaint',
                MessageID: 'pm-1',
                Email: 'a@b.example',
              }),
              auth,
            )
          ).statusCode,
        ).toBe(200);
        expect(
          (
            await post(
              t,
              path,
              JSON.stringify({
                RecordType: 'Delivery',
                MessageID: 'pm-1',
                Recipient: 'a@b.example',
                DeliveredAt: '2026-01-01T00:00:01Z',
              }),
              auth,
            )
          ).statusCode,
        ).toBe(200);
        expect((await recorded(t)).map((e) => [e.type, e.bounceType ?? null])).toEqual([
          ['bounced', 'hard'],
          ['bounced', 'soft'],
          ['bounced', 'soft'],
          ['complained', null],
          ['delivered', null],
        ]);
        expect((await recorded(t))[0]).toMatchObject({
          source: 'postmark',
          eventKey: 'Bounce:1',
          recipient: 'zaphod@example.com',
          at: Date.UTC(2026, 0, 1),
          match: { providerMessageId: '883953f4-6105-42a2-a16a-77a8eac79483', messageId: 'msg_abc123' },
        });
        // The same bounce again: the same key, so the core can drop it.
        expect((await post(t, path, bounce('HardBounce', 1), auth)).json()).toMatchObject({ duplicates: 1 });
      },
    );

    it.skipIf(skip)('no credentials, a wrong password or a wrong user are 401 and record nothing', async () => {
      const path = await serviceWithEvents(t, 'pm', { source: 'postmark', ...creds });
      expectError(await post(t, path, bounce('HardBounce', 1)), 401, 'unauthorized');
      expectError(await post(t, path, bounce('HardBounce', 1), basic(creds.username, 'guess')), 401, 'unauthorized');
      expectError(await post(t, path, bounce('HardBounce', 1), basic('someone', creds.password)), 401, 'unauthorized');
      expectError(await post(t, path, bounce('HardBounce', 1), { authorization: 'Bearer x' }), 401, 'unauthorized');
      await nothingRecorded();
      expect(await providerEventsCount(t, 'postmark', 'rejected')).toBe(4);
    });

    it.skipIf(skip)('malformed JSON with good credentials is 400 invalid_body', async () => {
      const path = await serviceWithEvents(t, 'pm', { source: 'postmark', ...creds });
      expectError(await post(t, path, '{"RecordType":', basic(creds.username, creds.password)), 400, 'invalid_body');
      await nothingRecorded();
    });
  });

  describe('mailgun', () => {
    const signingKey = randomBytes(16).toString('hex');
    const event = (sig: Record<string, string>, data: Record<string, unknown> = {}) =>
      JSON.stringify({
        signature: sig,
        'event-data': {
          event: 'failed',
          id: `ev-${randomBytes(4).toString('hex')}`,
          severity: 'permanent',
          timestamp: 1767225600.5,
          recipient: 'Bob@Example.com',
          message: { headers: { 'message-id': '20260101.abc@mg.example.com' } },
          'delivery-status': { code: 550, message: 'mailbox unavailable', description: 'No such user' },
          'user-variables': { mailroom_message_id: 'msg_x1' },
          ...data,
        },
      });

    it.skipIf(skip)('a signed failed (permanent = hard, temporary = soft), delivered and complained are read', async () => {
      const path = await serviceWithEvents(t, 'mg', { source: 'mailgun', signing_key: signingKey });
      for (const data of [{}, { severity: 'temporary' }, { event: 'delivered' }, { event: 'complained' }, { event: 'opened' }]) {
        const res = await post(t, path, event(mailgunSignature(signingKey, t.clock.now()), data));
        expect(res.statusCode, res.body).toBe(200);
      }
      expect((await recorded(t)).map((e) => [e.type, e.bounceType ?? null])).toEqual([
        ['bounced', 'hard'],
        ['bounced', 'soft'],
        ['delivered', null],
        ['complained', null],
      ]);
      expect((await recorded(t))[0]).toMatchObject({
        source: 'mailgun',
        recipient: 'bob@example.com',
        status: '550',
        reason: 'No such user',
        at: 1767225600500,
        match: { messageId: 'msg_x1', providerMessageId: '20260101.abc@mg.example.com' },
      });
    });

    it.skipIf(skip)('forged, wrong-key, altered, stale and replayed signatures are 401 and record nothing', async () => {
      const path = await serviceWithEvents(t, 'mg', { source: 'mailgun', signing_key: signingKey });
      const now = t.clock.now();
      const good = mailgunSignature(signingKey, now);
      expectError(await post(t, path, event({ ...good, signature: 'a'.repeat(64) })), 401, 'unauthorized');
      expectError(await post(t, path, event(mailgunSignature('another-key', now))), 401, 'unauthorized');
      expectError(await post(t, path, event({ ...good, timestamp: String(Number(good.timestamp) + 1) })), 401, 'unauthorized');
      expectError(await post(t, path, event(mailgunSignature(signingKey, now - 6 * 60_000))), 401, 'unauthorized');
      expectError(await post(t, path, JSON.stringify({ 'event-data': {} })), 401, 'unauthorized');
      await nothingRecorded();
      // The real one passes once; its token replayed (even with another event) does not.
      expect((await post(t, path, event(good))).statusCode).toBe(200);
      expectError(await post(t, path, event(good, { event: 'complained' })), 401, 'unauthorized');
      expect(await recorded(t)).toHaveLength(1);
    });

    it.skipIf(skip)('the claimed token is in the database: any process refuses its replay', async () => {
      const path = await serviceWithEvents(t, 'mg', { source: 'mailgun', signing_key: signingKey });
      const sig = mailgunSignature(signingKey, t.clock.now());
      expect((await post(t, path, event(sig))).statusCode).toBe(200);
      const claimed = await t.store.webhookTokens.claim('mailgun', sig.token ?? '', t.clock.now() + 600_000, t.clock.now());
      expect(claimed).toBe(false);
    });

    it.skipIf(skip)('unreadable event-data under a valid signature is 400 invalid_body', async () => {
      const path = await serviceWithEvents(t, 'mg', { source: 'mailgun', signing_key: signingKey });
      expectError(
        await post(t, path, JSON.stringify({ signature: mailgunSignature(signingKey, t.clock.now()), 'event-data': 'x' })),
        400,
        'invalid_body',
      );
      await nothingRecorded();
    });
  });

  describe('resend (Svix)', () => {
    const body = (type: string, extra: Record<string, unknown> = {}) =>
      JSON.stringify({
        type,
        created_at: '2026-01-01T00:00:02.000Z',
        data: { email_id: '4ef9a417-02e9-4d39-ad75-9611e0fcc33c', to: ['Carol@Example.com'], subject: 'Hi', ...extra },
      });

    it.skipIf(skip)('signed delivered, bounced (Permanent = hard), complained and delivery_delayed are read', async () => {
      const secret = newSvixSecret();
      const path = await serviceWithEvents(t, 'rs', { source: 'resend', secret });
      const bodies = [
        body('email.delivered'),
        body('email.bounced', { bounce: { type: 'Permanent', subType: 'General', message: 'gone' } }),
        body('email.bounced', { bounce: { type: 'Transient', subType: 'MailboxFull', message: 'full' } }),
        body('email.complained'),
        body('email.delivery_delayed'),
        body('email.opened'),
      ];
      for (const b of bodies) expect((await post(t, path, b, svixHeaders(secret, b, t.clock.now()))).statusCode).toBe(200);
      expect((await recorded(t)).map((e) => [e.type, e.bounceType ?? null])).toEqual([
        ['delivered', null],
        ['bounced', 'hard'],
        ['bounced', 'soft'],
        ['complained', null],
        ['deferred', null],
      ]);
      expect((await recorded(t))[1]).toMatchObject({
        source: 'resend',
        recipient: 'carol@example.com',
        reason: 'gone',
        match: { providerMessageId: '4ef9a417-02e9-4d39-ad75-9611e0fcc33c' },
      });
    });

    it.skipIf(skip)('during a secret rotation any one matching v1 signature is enough', async () => {
      const secret = newSvixSecret();
      const path = await serviceWithEvents(t, 'rs', { source: 'resend', secret });
      const b = body('email.delivered');
      const own = svixHeaders(secret, b, t.clock.now(), 'msg_rot');
      const other = svixHeaders(newSvixSecret(), b, t.clock.now(), 'msg_rot');
      const headers = { ...own, 'svix-signature': `${other['svix-signature']} v2,xyz ${own['svix-signature']}` };
      expect((await post(t, path, b, headers)).statusCode).toBe(200);
    });

    it.skipIf(skip)('a wrong key, an altered body, a changed id, a stale timestamp and no headers are 401', async () => {
      const secret = newSvixSecret();
      const path = await serviceWithEvents(t, 'rs', { source: 'resend', secret });
      const b = body('email.complained');
      const now = t.clock.now();
      expectError(await post(t, path, b, svixHeaders(newSvixSecret(), b, now)), 401, 'unauthorized');
      expectError(await post(t, path, b.replace('Carol', 'Dave'), svixHeaders(secret, b, now)), 401, 'unauthorized');
      expectError(await post(t, path, b, { ...svixHeaders(secret, b, now, 'msg_a'), 'svix-id': 'msg_b' }), 401, 'unauthorized');
      expectError(await post(t, path, b, svixHeaders(secret, b, now - 5 * 60_000 - 1000)), 401, 'unauthorized');
      expectError(await post(t, path, b, svixHeaders(secret, b, now + 6 * 60_000)), 401, 'unauthorized');
      expectError(await post(t, path, b), 401, 'unauthorized');
      await nothingRecorded();
    });

    it.skipIf(skip)('malformed JSON under a valid signature is 400 invalid_body', async () => {
      const secret = newSvixSecret();
      const path = await serviceWithEvents(t, 'rs', { source: 'resend', secret });
      const b = '{"type":"email.bounced",';
      expectError(await post(t, path, b, svixHeaders(secret, b, t.clock.now())), 400, 'invalid_body');
      await nothingRecorded();
    });
  });
});
