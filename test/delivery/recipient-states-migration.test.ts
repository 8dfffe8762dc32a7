import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../src/storage/dialect.js';
import { messagesRepo } from '../../src/storage/messages.js';
import * as m0001 from '../../src/storage/migrations/0001_initial.js';
import { DIALECTS, freshDatabase, postgresAvailable, type TestDatabase } from '../support/stores.js';

const pgUp = await postgresAvailable();

describe.each(DIALECTS)('migration 0002_recipient_states on %s', (dialect) => {
  const skip = dialect === 'postgres' && !pgUp;
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
  });

  it.skipIf(skip)('recipients stored before it read as their message: sent for a sent message, pending for a queued one', async () => {
    const database = await freshDatabase(dialect);
    dbs.push(database);
    const opened = await openDatabase(database.url);
    const { db } = opened;
    try {
      // A database as 0001 left it, with the runner's bookkeeping saying so.
      await m0001.up(db as never, dialect);
      await sql`create table if not exists mailroom_migrations (name text primary key, applied_at bigint not null)`.execute(db);
      await sql`insert into mailroom_migrations (name, applied_at) values ('0001_initial', 0)`.execute(db);
      await sql`insert into organizations (id, name, plan, credits, overdraft, when_out_of_credits, hold_queue_limit,
        email_verified, suspended, security, created_at, updated_at) values ('acme', 'Acme', 'pro', 0, 0, 'hold', 10, 1, 0, '{}', 0, 0)`.execute(db);
      for (const [id, status] of [['msg_sent', 'sent'], ['msg_queued', 'queued']] as const) {
        await sql`insert into messages (id, org_id, template_id, service_id, status, status_token_hash, key_type, subject,
          header_message_id, credit_taken, attempts, created_at, updated_at)
          values (${id}, 'acme', 'contact', 'smtp', ${status}, 'h', 'private', 's', ${`<${id}@x>`}, 1, 1, 0, 0)`.execute(db);
        await sql`insert into message_recipients (message_id, org_id, kind, email, created_at)
          values (${id}, 'acme', 'to', 'owner@acme.test', 0), (${id}, 'acme', 'cc', 'audit@acme.test', 0)`.execute(db);
      }

      expect(await migrate(opened)).toContain('0002_recipient_states');
      const repo = messagesRepo(db, dialect);
      expect((await repo.recipientsOf({ id: 'msg_sent', status: 'sent' })).map((r) => [r.address, r.kind, r.state, r.reason])).toEqual([
        ['owner@acme.test', 'to', 'sent', null], ['audit@acme.test', 'cc', 'sent', null],
      ]);
      expect((await repo.recipientsOf({ id: 'msg_queued', status: 'queued' })).map((r) => r.state)).toEqual(['pending', 'pending']);
    } finally {
      await db.destroy();
    }
  });
});
