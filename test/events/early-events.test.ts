import { expect, it } from 'vitest';
import { CONTACT_TEMPLATE, deliveryHarness, row, seedSmtpOrg, send, smtpService, view } from '../support/delivery.js';
import { smtpError } from '../support/smtp-sink.js';
import { ev, recorder } from '../support/events/record.js';
import { describeDialects } from '../support/dialects.js';

const OWNER = 'owner@acme.test';
const AUDIT = 'audit@acme.test';

/**
 * An event about a recipient accepted on the first attempt, reported while the message still
 * owed a retry to another (status queued), moves nothing then; once the retry settles the
 * message, it is applied (replayEarlyEvents), forward only.
 */
describeDialects('events that arrive while a retry is owed, on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)(
    'a delivery of the To, reported while the Cc waits for its retry, makes the message delivered once the retry is sent',
    async () => {
      const t = await h.app();
      const sink = await h.sink(t, {
        rcpt: (a, n) => (a === AUDIT && n === 1 ? smtpError(451, '4.2.1 Mailbox busy, try later') : undefined),
      });
      await seedSmtpOrg(t.store, smtpService(sink.port), { templates: [CONTACT_TEMPLATE] });
      const { worker } = h.worker(t);
      const id = await send(t);
      expect(await worker.runOnce()).toBe(1);
      expect((await row(t.store, id)).status).toBe('queued');

      const r = recorder(t.store, t.clock);
      expect(await r.record([ev('delivered', id, OWNER)])).toEqual(['recorded']);
      // On the timeline, but the message is not ours to move while the worker owes the Cc.
      expect((await row(t.store, id)).status).toBe('queued');

      t.clock.advance(60_000);
      expect(await worker.runOnce()).toBe(1);
      const after = (await view(t, id)) as { status: string; recipients?: Array<{ address: string; state: string }> };
      expect(after.status).toBe('delivered');
      expect(Object.fromEntries((after.recipients ?? []).map((x) => [x.address, x.state]))).toEqual({
        [OWNER]: 'delivered',
        [AUDIT]: 'sent',
      });
      // Replayed, not recorded again: one delivered entry on the timeline.
      expect((await view(t, id)).events.filter((e) => e.type === 'delivered')).toHaveLength(1);
    },
  );
});
