import { describe, expect, it } from 'vitest';
import { providerMessageIdOf } from '../../src/delivery/transports/smtp-reply.js';
import { admin } from '../support/admin.js';
import { deliveryHarness, row, seedSmtpOrg, send, smtpService, view, type MessageView } from '../support/delivery.js';
import { CONTACT_TEMPLATE } from '../support/seed.js';
import { heldRelay } from '../support/held-relay.js';
import { newSvixSecret, svixHeaders } from '../support/events/signing.js';
import { post } from '../support/events/intake.js';
import { suppressionRows } from '../support/events/record.js';
import { describeDialects } from '../support/dialects.js';

/** Resend's id for an email (a UUID), as its SMTP endpoint answers DATA: `250 OK <id>`. */
const RESEND_ID = '4ef9a417-02e9-4d39-ad75-9611e0fcc33c';
const SES_ID = '0100018c1f2e3d4c-5b6a7988-1234-4abc-9def-0123456789ab-000000';
const QUEUE_ID = '4XyZ9k1LmQz';
const OWNER = 'owner@acme.test';

/**
 * Issue 25, 8: the relay's id in its `250` reply is the provider message id where the service
 * has an events source, so events from providers' SMTP endpoints that name it (Resend's, SES's)
 * match their message. Before, `250 OK <id>` (Resend) was read as no id and its events matched
 * nothing.
 */
describe("the id in a relay's 250 for a service with an events source", () => {
  it.each([
    [`250 OK ${RESEND_ID}`, RESEND_ID],
    [`250 Ok ${RESEND_ID}`, RESEND_ID],
    [`250 2.0.0 OK ${RESEND_ID}`, RESEND_ID],
    [`250 Ok <${RESEND_ID}>`, RESEND_ID],
    [`250 Ok ${SES_ID}`, SES_ID],
    [`250 2.0.0 Ok: queued as ${QUEUE_ID}`, QUEUE_ID],
  ])('%s → %s', (reply, id) => {
    expect(providerMessageIdOf(reply, { events: true })).toBe(id);
  });

  it.each([
    '250 OK queued',
    '250 OK: message queued',
    '250 Ok',
    '250 OK Accepted',
    '250 OK id=1kXyZ-0001ab-Cd',
    '250 2.0.0 OK 1571601091 d44si1315748ede.149 - gsmtp',
    '250 OK abc123',
    `550 OK ${RESEND_ID}`,
  ])('%s → none', (reply) => {
    expect(providerMessageIdOf(reply, { events: true })).toBeUndefined();
  });

  it('without an events source only the SES and queued-as forms are read, as before', () => {
    expect(providerMessageIdOf(`250 OK ${RESEND_ID}`)).toBeUndefined();
    expect(providerMessageIdOf(`250 Ok ${SES_ID}`)).toBe(SES_ID);
    expect(providerMessageIdOf(`250 2.0.0 Ok: queued as ${QUEUE_ID}`)).toBe(QUEUE_ID);
  });
});

describeDialects('a Resend event about a message sent over SMTP, on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip).each([
    ['Resend', `OK ${RESEND_ID}`, RESEND_ID],
    ['SES', `Ok ${SES_ID}`, SES_ID],
    ['Postfix-style', `2.0.0 Ok: queued as ${QUEUE_ID}`, QUEUE_ID],
  ])(
    'the relay answers as %s does: its id is stored, and a signed Resend bounce naming it bounces the message',
    async (_name, reply, id) => {
      const t = await h.app();
      const relay = await heldRelay(h.closer, reply, { held: false });
      const secret = newSvixSecret();
      await seedSmtpOrg(t.store, smtpService(relay.port, { events: { source: 'resend', secret } }), {
        templates: [CONTACT_TEMPLATE],
      });
      const shown = await admin(t, 'GET', '/organizations/acme/services/smtp');
      const eventsPath = new URL(shown.json<{ events_url: string }>().events_url).pathname;
      const { worker } = h.worker(t);
      const messageId = await send(t);
      expect(await worker.runOnce()).toBe(1);
      expect((await row(t.store, messageId)).provider_message_id).toBe(id);

      const body = JSON.stringify({
        type: 'email.bounced',
        created_at: '2026-01-01T00:00:05.000Z',
        data: {
          email_id: id,
          to: [OWNER],
          subject: 'Message from Ada',
          bounce: { type: 'Permanent', subType: 'General', message: 'No such user' },
        },
      });
      const res = await post(t, eventsPath, body, svixHeaders(secret, body, t.clock.now()));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ received: 1, recorded: 1, unmatched: 0 });
      const v = (await view(t, messageId)) as MessageView & { recipients?: Array<{ address: string; state: string }> };
      expect(v.status).toBe('bounced');
      expect(v.recipients).toEqual([expect.objectContaining({ address: OWNER, state: 'bounced' })]);
      expect(await suppressionRows(t.store)).toEqual([{ email: OWNER, reason: 'hard_bounce', message_id: messageId }]);
    },
  );
});
