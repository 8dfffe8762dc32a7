import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { housekeeping, PURGE_BATCH } from '../../src/delivery/housekeeping.js';
import { databaseOf, messageIds } from '../support/db.js';
import { deliveryHarness, insertQueued, send } from '../support/delivery.js';
import { seedOrg } from '../support/seed.js';
import { describeDialects } from '../support/dialects.js';

const DAY = 86_400_000;

describeDialects('retention purge in batches on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)('one run purges a backlog of several batches, and nothing newer', async () => {
    const t = await h.app();
    await seedOrg(t.store);
    const start = t.clock.now();
    const old = await insertQueued(t.store, PURGE_BATCH * 2 + 7, start - 31 * DAY, 'outbox');
    await databaseOf(t.store).updateTable('messages').set({ status: 'sent' }).where('id', 'in', old).execute();
    const recent = await send(t);

    await housekeeping({ store: t.store, retentionDays: 30 }, start);

    expect(await messageIds(t.store)).toEqual([recent]);
  });

  it.skipIf(skip || dialect !== 'sqlite')('finds messages past retention through an index led by created_at', async () => {
    const t = await h.app();
    const plan = await sql<{
      detail: string;
    }>`explain query plan select id from messages where created_at < ${1} and status != 'sending' limit 50`.execute(
      databaseOf(t.store),
    );
    expect(plan.rows.map((r) => r.detail).join('\n')).toMatch(/USING (COVERING )?INDEX messages_created/);
  });
});
