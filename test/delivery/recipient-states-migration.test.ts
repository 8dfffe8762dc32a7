import { sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { migrate } from '../../src/storage/dialect.js';
import { messagesRepo } from '../../src/storage/messages.js';
import { databaseAt0001 } from '../support/migrations.js';
import { freshDatabase, type TestDatabase } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

describeDialects('migration 0002_recipient_states on %s', (dialect, skip) => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
  });

  it.skipIf(skip)(
    'recipients stored before it read as their message: sent for a sent message, pending for a queued one',
    async () => {
      const database = await freshDatabase(dialect);
      dbs.push(database);
      const opened = await databaseAt0001(database);
      const { db } = opened;
      try {
        for (const [id, status] of [
          ['msg_sent', 'sent'],
          ['msg_queued', 'queued'],
        ] as const) {
          await sql`insert into messages (id, org_id, template_id, service_id, status, status_token_hash, key_type, subject,
          header_message_id, credit_taken, attempts, created_at, updated_at)
          values (${id}, 'acme', 'contact', 'smtp', ${status}, 'h', 'private', 's', ${`<${id}@x>`}, 1, 1, 0, 0)`.execute(db);
          await sql`insert into message_recipients (message_id, org_id, kind, email, created_at)
          values (${id}, 'acme', 'to', 'owner@acme.test', 0), (${id}, 'acme', 'cc', 'audit@acme.test', 0)`.execute(db);
        }

        expect(await migrate(opened)).toContain('0002_recipient_states');
        const repo = messagesRepo(db, dialect);
        expect(
          (await repo.recipientsOf({ id: 'msg_sent', status: 'sent' })).map((r) => [r.address, r.kind, r.state, r.reason]),
        ).toEqual([
          ['owner@acme.test', 'to', 'sent', null],
          ['audit@acme.test', 'cc', 'sent', null],
        ]);
        expect((await repo.recipientsOf({ id: 'msg_queued', status: 'queued' })).map((r) => r.state)).toEqual([
          'pending',
          'pending',
        ]);
      } finally {
        await db.destroy();
      }
    },
  );
});
