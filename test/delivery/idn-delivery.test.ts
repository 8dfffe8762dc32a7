import { expect, it } from 'vitest';
import { smtpError } from '../support/smtp-sink.js';
import {
  CONTACT_TEMPLATE,
  deliveryHarness,
  type MessageView,
  seedSmtpOrg,
  send,
  smtpService,
  view,
} from '../support/delivery.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Issue 25: IDN recipients through a real SMTP relay (smtp-server on loopback). nodemailer
 * writes `ann@exämple.com` (ASCII local part) as `ann@xn--exmple-cua.com` and keeps
 * `zoë@exämple.com` in UTF-8 under SMTPUTF8, so its refusal names the U-label; the outcome lands
 * on the recipient as the rule keys it, and the hard bounce suppresses that key.
 */
const ANN = 'ann@xn--exmple-cua.com';
const ZOE = 'zoë@xn--exmple-cua.com';

interface RecipientView {
  address: string;
  kind: string;
  state: string;
}

describeDialects('IDN recipients through an SMTP relay on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)('one accepted, one refused for good: each settles under its key, the refused one is suppressed', async () => {
    const t = await h.app();
    const sink = await h.sink(t, { rcpt: (a) => (a.startsWith('zoë@') ? smtpError(550, '5.1.1 No such user') : undefined) });
    await seedSmtpOrg(t.store, smtpService(sink.port), {
      templates: [{ ...CONTACT_TEMPLATE, to: 'Ann <ann@Exämple.com>', cc: 'Zoë <zoë@exämple.com>' }],
    });
    const { worker } = h.worker(t);
    const id = await send(t);
    expect(await worker.runOnce()).toBe(1);

    // smtp-server hands its callbacks U-labels whatever came over the wire, so the wire form is
    // read in the headers: nodemailer writes the A-label beside an ASCII local part (its envelope
    // too), and keeps UTF-8 beside a UTF-8 one, which the relay took under SMTPUTF8.
    expect(sink.rcptAttempts).toEqual(['ann@exämple.com', 'zoë@exämple.com']);
    expect(sink.received).toHaveLength(1);
    const raw = sink.received[0]!.raw.toString('utf8');
    expect(raw).toContain(`To: Ann <${ANN}>`);
    expect(raw).toMatch(/^Cc: .*<zoë@exämple\.com>$/m);

    const v = (await view(t, id)) as MessageView & { recipients: RecipientView[] };
    expect(v.recipients.map((r) => [r.address, r.state])).toEqual([
      [ANN, 'sent'],
      [ZOE, 'bounced'],
    ]);
    expect((await t.store.suppressions.list('acme')).map((s) => s.email)).toEqual([ZOE]);
    // The suppression refuses the next send to either spelling.
    const again = await t.app.inject({
      method: 'POST',
      url: '/v1/send',
      headers: { authorization: 'Bearer sk_test_private_0001' },
      payload: { template_id: 'contact', template_params: { name: 'x', email: 'x@example.org', message: 'm' } },
    });
    expect(again.statusCode, again.body).toBe(451);
  });
});
