import { expect, it } from 'vitest';
import { row } from '../support/delivery.js';
import { basic } from '../support/events/signing.js';
import { post, sentMessageHarness } from '../support/events/intake.js';
import { describeDialects } from '../support/dialects.js';

/** The header block of a raw message, unfolded. */
const headersOf = (raw: string): string => raw.slice(0, raw.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ');

/**
 * Headers that make the provider named by the service's events.source echo our message id in
 * its events (src/delivery/tracking-headers.ts); never added for another relay, which would pass
 * them on to the recipient.
 */
describeDialects('tracking headers on %s', (dialect, skip) => {
  const sent = sentMessageHarness();
  const PM = { source: 'postmark', username: 'hook', password: 'pm-secret-password' } as const;

  it.skipIf(skip)('Postmark: X-PM-Metadata carries our id, and a bounce with only that Metadata finds the message', async () => {
    const { t, sink, id } = await sent(dialect, PM);
    const headers = headersOf(sink.received[0]?.raw.toString('utf8') ?? '');
    // nodemailer capitalizes the name; header names are case-insensitive (RFC 5322).
    expect(headers).toMatch(new RegExp(`^X-PM-Metadata-mailroom_message_id: ${id}$`, 'im'));
    // No MessageID we know of: only the echoed Metadata can match.
    const body = JSON.stringify({
      RecordType: 'Bounce',
      ID: 4242,
      Type: 'HardBounce',
      TypeCode: 1,
      MessageID: 'unknown-to-us',
      Email: 'owner@acme.test',
      BouncedAt: '2026-01-01T00:00:05Z',
      Details: 'smtp;550 5.1.1 unknown user',
      Metadata: { Mailroom_message_id: id },
    });
    const res = await post(t, new URL(await eventsUrl(t)).pathname, body, basic(PM.username, PM.password));
    expect(res.json()).toEqual({ received: 1, recorded: 1, duplicates: 0, unmatched: 0 });
    // One of the message's two recipients bounced: suppressed, the message still sent for the other.
    expect((await t.store.suppressions.list('acme')).map((x) => [x.email, x.reason])).toEqual([
      ['owner@acme.test', 'hard_bounce'],
    ]);
    expect((await row(t.store, id)).status).toBe('sent');
  });

  it.skipIf(skip)('Mailgun, SendGrid and SES get their own header with our id; a service without events gets none', async () => {
    const cases = [
      [
        { source: 'mailgun', signing_key: 'key-1234567890' },
        (id: string) => `X-Mailgun-Variables: {"mailroom_message_id":"${id}"}`,
      ],
      [
        { source: 'sendgrid', public_key: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE' },
        (id: string) => `X-SMTPAPI: {"unique_args":{"mailroom_message_id":"${id}"}}`,
      ],
      [{ source: 'ses' }, (id: string) => `X-SES-MESSAGE-TAGS: mailroom_message_id=${id}`],
    ] as const;
    for (const [events, expected] of cases) {
      const { sink, id } = await sent(dialect, events);
      const headers = headersOf(sink.received[0]?.raw.toString('utf8') ?? '');
      expect(headers.toLowerCase(), events.source).toContain(expected(id).toLowerCase());
      expect(headers.match(/X-PM-Metadata|X-Mailgun-Variables|X-SMTPAPI|X-SES-MESSAGE-TAGS/gi), events.source).toHaveLength(1);
    }
  });
});

async function eventsUrl(t: Awaited<ReturnType<ReturnType<typeof sentMessageHarness>>>['t']): Promise<string> {
  const { admin } = await import('../support/admin.js');
  return (await admin(t, 'GET', '/organizations/acme/services/smtp')).json<{ events_url: string }>().events_url;
}
