import { expect, it } from 'vitest';
import { insertQueued } from '../support/delivery.js';
import { Closer, tempDir } from '../support/cleanup.js';
import { freePort, waitFor } from '../support/smtp-sink.js';
import { requireBuild, startCli } from '../support/processes.js';
import { databaseOf } from '../support/db.js';
import { seedOrg } from '../support/seed.js';
import { freshStore } from '../support/stores.js';
import { deliveryRows, insertEndpoint } from '../support/webhooks/dispatch.js';
import { startReceiver, testSecret } from '../support/webhooks/receiver.js';
import { describeDialects } from '../support/dialects.js';

const SECRET = testSecret(5);

describeDialects('webhooks through a SIGKILL of `mailroom worker` on %s', (dialect, skip) => {
  it.skipIf(skip)(
    'killed during a burst, then restarted: every event is delivered, none lost',
    { timeout: 120_000 },
    async () => {
      requireBuild();
      const c = new Closer();
      try {
        const t = await freshStore(dialect);
        c.defer(() => t.cleanup());
        await seedOrg(t.store, { credits: 1000 });
        const r = await startReceiver([SECRET]);
        c.defer(() => r.close());
        r.delayMs = 20;
        await insertEndpoint(t.store, { id: 'wh_1', url: r.url, secret: SECRET }, Date.now());
        const total = 60;
        await insertQueued(t.store, total, Date.now(), 'outbox');
        const env = {
          MAILROOM_DATABASE_URL: t.database.url,
          MAILROOM_DATA_DIR: tempDir(c),
          MAILROOM_WORKER_LEASE_SECONDS: '2',
          MAILROOM_WORKER_POLL_MS: '50',
          MAILROOM_WEBHOOK_TIMEOUT_SECONDS: '1',
          MAILROOM_WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1',
          MAILROOM_LOG_LEVEL: 'warn',
          MAILROOM_METRICS_PORT: String(await freePort()),
          MAILROOM_HOST: '127.0.0.1',
        };
        const first = startCli(['worker'], env, c);
        await first.waitForOutput('mailroom worker running');
        await waitFor(() => r.received.length >= 30, 30_000, 'the first worker to post 30 webhooks');
        first.child.kill('SIGKILL');
        await first.exited;
        // The kill came mid-burst: work was left for the second worker.
        expect((await deliveryRows(t.store)).some((x) => x.state !== 'succeeded')).toBe(true);
        const second = startCli(['worker'], env, c);
        await second.waitForOutput('mailroom worker running');
        // Every message sent (queued, sending, sent: three events each), every event's delivery done.
        await waitFor(
          async () => {
            const rows = await deliveryRows(t.store);
            return rows.length >= total * 3 && rows.every((x) => x.state === 'succeeded');
          },
          90_000,
          'every delivery to succeed',
        );
        const events = await databaseOf(t.store).selectFrom('message_events').select(['id']).execute();
        const rows = await deliveryRows(t.store);
        expect(rows).toHaveLength(events.length);
        const got = new Set(r.received.map((x) => x.webhookId));
        for (const row of rows) expect(got.has(`${row.message_id}.${row.sequence}`)).toBe(true);
        expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
      } finally {
        await c.closeAll();
      }
    },
  );
});
