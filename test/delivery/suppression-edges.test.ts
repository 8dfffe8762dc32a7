import { expect, it } from 'vitest';
import { DeliveryError, type TransportFactory } from '../../src/delivery/transport.js';
import { closerPerTest } from '../support/cleanup.js';
import { deliveryHarness, insertQueued, row, send, view } from '../support/delivery.js';
import { ev, recorder, suppressionRows } from '../support/events/record.js';
import { failoverSetup } from '../support/failover.js';
import { describeDialects } from '../support/dialects.js';

/**
 * The edges where the three callers of automatic suppression disagreed before they asked one
 * rule (src/domain/suppression-policy.ts; its table test is test/domain/suppression-policy.test.ts):
 * - a refusal of the whole message for the mailbox suppressed whatever addresses the transport
 *   named, inside the message or not (the per-recipient path and events never did);
 * - an event about a recipient dropped as suppressed before sending suppressed it again, after an
 *   operator had removed it (the worker never suppresses a recipient it did not send to).
 */

/** A provider that refuses every message for the mailbox, naming what `named` says (none: a bare 550 after DATA). */
const refusing =
  (named: (to: string) => string[]): TransportFactory =>
  () => ({
    send: async (mail) => {
      throw new DeliveryError('mailbox', '550 5.1.1 user unknown', named(mail.email.to[0]?.address ?? ''));
    },
    close: async () => undefined,
  });

describeDialects('automatic suppression at its edges, on %s', (dialect, skip) => {
  const closer = closerPerTest();
  const h = deliveryHarness(dialect);

  it.skipIf(skip)(
    'a whole-message mailbox refusal naming only an address the message does not have: bounced, nobody suppressed',
    async () => {
      const s = await failoverSetup(dialect, closer, { primarySettings: {} });
      const worker = s.worker({ transports: { smtp: refusing(() => ['stranger@example.net']) } });
      const [id] = await insertQueued(s.store, 1, s.clock.now(), 'primary');
      expect(await worker.runOnce()).toBe(1);
      expect((await row(s.store, id!)).status).toBe('bounced');
      expect(await suppressionRows(s.store)).toEqual([]);
    },
  );

  it.skipIf(skip)('naming its recipient, or no one, suppresses the To address as a hard bounce', async () => {
    const s = await failoverSetup(dialect, closer, { primarySettings: {} });
    // insertQueued sends message i to rcpt<i>@example.com: the first is named (spelled otherwise), the second not.
    const [named, bare] = await insertQueued(s.store, 2, s.clock.now(), 'primary');
    await s
      .worker({ transports: { smtp: refusing((to) => (to === 'rcpt0@example.com' ? ['RCPT0@Example.com'] : [])) } })
      .runOnce();
    expect((await row(s.store, named!)).status).toBe('bounced');
    expect((await row(s.store, bare!)).status).toBe('bounced');
    expect(await suppressionRows(s.store)).toEqual([
      { email: 'rcpt0@example.com', reason: 'hard_bounce', message_id: named },
      { email: 'rcpt1@example.com', reason: 'hard_bounce', message_id: bare },
    ]);
  });

  it.skipIf(skip)(
    'an event about a recipient dropped as suppressed does not suppress it again once an operator removed it',
    async () => {
      // CONTACT_TEMPLATE sends To owner@acme.test and Cc audit@acme.test.
      const { t } = await h.smtpApp();
      const id = await send(t);
      await t.store.suppressions.add('acme', 'audit@acme.test', 'manual', t.clock.now());
      expect(await h.worker(t).worker.runOnce()).toBe(1);
      const recipients = ((await view(t, id)) as { recipients?: Array<{ address: string; state: string }> }).recipients;
      expect(recipients).toContainEqual(expect.objectContaining({ address: 'audit@acme.test', state: 'suppressed' }));
      expect(await t.store.suppressions.remove('acme', 'audit@acme.test')).toBe(true);

      const r = recorder(t.store, t.clock);
      expect(
        await r.record([ev('complained', id, 'audit@acme.test'), ev('bounced', id, 'audit@acme.test', { bounceType: 'hard' })]),
      ).toEqual(['recorded', 'recorded']);
      expect(await suppressionRows(t.store)).toEqual([]);
      // The recipient it was sent to still is suppressed by its own complaint.
      expect(await r.record([ev('complained', id, 'owner@acme.test')])).toEqual(['recorded']);
      expect(await suppressionRows(t.store)).toEqual([{ email: 'owner@acme.test', reason: 'complaint', message_id: id }]);
    },
  );
});
