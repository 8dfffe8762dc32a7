import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { row, view } from '../support/delivery.js';
import { basic, mailgunSignature } from '../support/events/signing.js';
import { recorded, post, sentMessageHarness } from '../support/events/intake.js';
import { describeDialects } from '../support/dialects.js';

const OWNER = 'owner@acme.test';

/**
 * Bodies a provider account holder can sign (or send with valid credentials) that once made the
 * intake answer 500: absurd event times (PostgreSQL bigint overflow; on SQLite a stored time that
 * made GET /v1/messages/{id} throw) and JSON nested 200k levels deep (a recursive stringify
 * overflowed the stack). And events that carry no id of their own: digest keys, not a 400.
 */
describeDialects('untrusted but verified provider bodies on %s', (dialect, skip) => {
  const sent = sentMessageHarness();
  const creds = { username: 'pm-hook', password: randomBytes(16).toString('hex') };
  const auth = basic(creds.username, creds.password);

  it.skipIf(skip)(
    'Postmark times of 1e300, negative or unreadable are the receipt time; the message still reads back',
    async () => {
      const { t, id, eventsPath } = await sent(dialect, { source: 'postmark', ...creds });
      const times: unknown[] = [1e300, -5, 'NaN', '+275760-09-13T00:00:00.000Z', '1999-12-31T23:59:59Z', { nested: 1 }];
      const receipts: number[] = [];
      for (const [i, at] of times.entries()) {
        const body = JSON.stringify({
          RecordType: 'Delivery',
          MessageID: `pm-${i}`,
          Recipient: OWNER,
          DeliveredAt: at,
          Metadata: { mailroom_message_id: id },
        });
        const res = await post(t, eventsPath, body, auth);
        receipts.push(t.clock.now());
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json()).toMatchObject({ received: 1, recorded: 1 });
      }
      expect((await recorded(t)).map((e) => e.at)).toEqual(receipts);
      expect((await row(t.store, id)).status).toBe('delivered');
      const shown = await view(t, id);
      expect(shown.events.filter((e) => e.type === 'delivered').map((e) => Date.parse(e.at))).toEqual(receipts);
    },
  );

  it.skipIf(skip)(
    'a 400 KB Postmark bounce nested 200k levels deep, without ID, is recorded under a digest of its bytes (and once)',
    async () => {
      const { t, id, eventsPath } = await sent(dialect, { source: 'postmark', ...creds });
      const depth = 200_000;
      const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const metadata = `"Metadata":{"mailroom_message_id":"${id}"}`;
      const body = `{"RecordType":"Bounce","Type":"HardBounce","Email":"${OWNER}",${metadata},"Content":${nested}}`;
      expect(body.length).toBeGreaterThan(400_000);
      const res = await post(t, eventsPath, body, auth);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ received: 1, recorded: 1, duplicates: 0, unmatched: 0 });
      expect((await recorded(t))[0]?.eventKey).toMatch(/^Bounce:[0-9a-f]{64}$/);
      expect((await t.store.suppressions.list('acme')).map((x) => x.email)).toEqual([OWNER]);
      // Postmark retrying the same bytes: the same key.
      expect((await post(t, eventsPath, body, auth)).json()).toMatchObject({ recorded: 0, duplicates: 1 });
      // Deep nesting in the fields that make a Delivery's key: bounded, not a 500.
      const deep = `{"RecordType":"Delivery","Recipient":"${OWNER}",${metadata},"MessageID":${nested}}`;
      const delivered = await post(t, eventsPath, deep, auth);
      expect(delivered.statusCode, delivered.body).toBe(200);
      expect(delivered.json()).toMatchObject({ recorded: 1 });
    },
  );

  it.skipIf(skip)(
    'a Mailgun event without event-data.id (and a timestamp of 1e300) is recorded under a digest key, once',
    async () => {
      const signingKey = randomBytes(16).toString('hex');
      const { t, id, eventsPath } = await sent(dialect, { source: 'mailgun', signing_key: signingKey });
      const data = {
        event: 'failed',
        severity: 'permanent',
        timestamp: 1e300,
        recipient: OWNER,
        'user-variables': { mailroom_message_id: id },
      };
      const body = () => JSON.stringify({ signature: mailgunSignature(signingKey, t.clock.now()), 'event-data': data });
      const res = await post(t, eventsPath, body());
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ received: 1, recorded: 1, duplicates: 0, unmatched: 0 });
      const [event] = await recorded(t);
      expect(event?.eventKey).toMatch(/^event:[0-9a-f]{64}$/);
      expect(event?.at).toBe(t.clock.now());
      expect((await t.store.suppressions.list('acme')).map((x) => x.email)).toEqual([OWNER]);
      // Mailgun retrying (a fresh signature token, the same event): a duplicate.
      expect((await post(t, eventsPath, body())).json()).toMatchObject({ recorded: 0, duplicates: 1 });
      await view(t, id);
    },
  );
});
