import { expect, it } from 'vitest';
import type { EventNotifier } from '../../src/events/types.js';
import { insertMessage } from '../support/db.js';
import { buildTestApp, testConfig, type TestApp } from '../support/app.js';
import { freshStore } from '../support/stores.js';
import { basic } from '../support/events/signing.js';
import { post, serviceWithEvents } from '../support/events/intake.js';
import { describeDialects } from '../support/dialects.js';

/**
 * The outbound notifier seam end to end: the notifier buildServices is given reaches the
 * provider events route, and every event recorded there is handed to it after its commit.
 */
describeDialects('the event notifier, wired through buildServices, on %s', (dialect, skip) => {
  it.skipIf(skip)('a recorded provider event reaches the notifier; a duplicate or unmatched one does not', async () => {
    const ts = await freshStore(dialect);
    const notified: Array<Parameters<EventNotifier['notify']>[0]> = [];
    const config = testConfig();
    const app = await buildTestApp(config, {
      store: ts.store,
      clock: ts.clock,
      notifier: {
        notify: (e) => {
          notified.push(e);
        },
      },
    });
    const t: TestApp = {
      ...ts,
      app,
      config,
      cleanup: async () => {
        await app.close();
        await ts.cleanup();
      },
    };
    try {
      const path = await serviceWithEvents(t, 'pm', { source: 'postmark', username: 'hook', password: 'pm-secret-password' });
      await insertMessage(t.store, 'acme', 'msg_wired1', 'sent', t.clock.now(), true, 'pm');
      const delivery = (providerId: string, messageId: string) =>
        JSON.stringify({
          RecordType: 'Delivery',
          MessageID: providerId,
          Recipient: 'someone@example.com',
          DeliveredAt: '2026-01-01T00:00:05Z',
          Metadata: { mailroom_message_id: messageId },
        });
      const auth = basic('hook', 'pm-secret-password');
      expect((await post(t, path, delivery('pm-1', 'msg_wired1'), auth)).json()).toMatchObject({ recorded: 1 });
      expect((await post(t, path, delivery('pm-1', 'msg_wired1'), auth)).json()).toMatchObject({ duplicates: 1 });
      expect((await post(t, path, delivery('pm-2', 'msg_nosuchone'), auth)).json()).toMatchObject({ unmatched: 1 });
      expect(notified).toEqual([expect.objectContaining({ messageId: 'msg_wired1', orgId: 'acme', type: 'delivered' })]);
    } finally {
      await t.cleanup();
    }
  });
});
