import { sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { migrate } from '../../src/storage/dialect.js';
import { describeDialects } from '../support/dialects.js';
import { databaseBefore } from '../support/migrations.js';
import { freshDatabase, type TestDatabase } from '../support/stores.js';

/**
 * Migration 0015 (issue 27) over a deployment at 0014 with keys and messages: every row it
 * finds is live and not simulated; the partial index of test messages, the two new tables and
 * (SQLite) the planner statistics line of the new index are there.
 */
describeDialects('migration 0015_test_mode on %s', (dialect, skip) => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
  });

  it.skipIf(skip)('existing keys and messages become live and not simulated; indexes, tables and stats are added', async () => {
    const database = await freshDatabase(dialect);
    dbs.push(database);
    const opened = await databaseBefore(database, '0015');
    const { db } = opened;
    try {
      // Seeded keys are named like test keys: the mode comes from the column, and they stay live.
      await sql`insert into api_keys (id, org_id, type, key_hash, public_key, hint, status, created_at)
        values ('key_1', 'acme', 'private', 'h1', null, 'sk_…0001', 'active', 0),
               ('key_2', 'acme', 'public', 'h2', 'pk_test_public_0001', 'pk_…0001', 'active', 0)`.execute(db);
      await sql`insert into messages (id, org_id, template_id, service_id, status, status_token_hash, key_type, subject,
        header_message_id, credit_taken, attempts, next_attempt_at, created_at, updated_at)
        values ('msg_1', 'acme', 'contact', 'outbox', 'sent', 't1', 'private', 'Hi', '<1@x>', 1, 1, null, 5, 5),
               ('msg_2', 'acme', 'contact', 'outbox', 'queued', 't2', 'public', 'Hi', '<2@x>', 1, 0, 6, 6, 6)`.execute(db);

      // 0015 first; later migrations follow it and must leave what it did as it was.
      expect((await migrate(opened))[0]).toBe('0015_test_mode');

      const keys = await sql<{ id: string; mode: string }>`select id, mode from api_keys order by id`.execute(db);
      expect(keys.rows).toEqual([
        { id: 'key_1', mode: 'live' },
        { id: 'key_2', mode: 'live' },
      ]);
      const messages = await sql<{
        id: string;
        mode: string;
        simulated: number;
      }>`select id, mode, simulated from messages order by id`.execute(db);
      expect(messages.rows.map((r) => ({ ...r, simulated: Number(r.simulated) }))).toEqual([
        { id: 'msg_1', mode: 'live', simulated: 0 },
        { id: 'msg_2', mode: 'live', simulated: 0 },
      ]);
      // Nothing was test before: the partial index starts empty, and the new tables too.
      const tables = ['test_inbox', 'simulator_events'];
      for (const table of tables) {
        const n = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db);
        expect(Number(n.rows[0]?.n), table).toBe(0);
      }

      const indexDefs =
        opened.dialect === 'sqlite'
          ? (
              await sql<{ name: string; def: string }>`select name, sql as def from sqlite_master where type = 'index'`.execute(
                db,
              )
            ).rows
          : (
              await sql<{
                name: string;
                def: string;
              }>`select indexname as name, indexdef as def from pg_indexes where schemaname = current_schema()`.execute(db)
            ).rows;
      const defs = new Map(indexDefs.map((r) => [r.name, r.def ?? '']));
      expect(defs.get('messages_test')).toMatch(/\(.*org_id.*created_at.*id.*\) where .*mode.* = 'test'/i);
      expect(defs.get('test_inbox_org_time')).toMatch(/org_id.*created_at.*message_id/);
      expect(defs.get('simulator_events_due')).toMatch(/due_at/);
      expect(defs.get('simulator_events_message')).toMatch(/message_id/);

      if (opened.dialect === 'sqlite') {
        const stat = await sql<{
          stat: string;
        }>`select stat from sqlite_stat1 where tbl = 'messages' and idx = 'messages_test'`.execute(db);
        expect(stat.rows).toEqual([{ stat: '1000 100 1 1' }]);
      }

      // Deleting a message takes its captured copy and its scheduled events with it.
      await sql`insert into test_inbox (message_id, org_id, template_id, subject, from_addr, recipients, search, blob_key,
        size, sha256, created_at, captured_at)
        values ('msg_1', 'acme', 'contact', 'Hi', 'a@x', '[]', 'hi a@x', 'acme/eml_msg_1', 1, 'ab', 5, 6)`.execute(db);
      await sql`insert into simulator_events (message_id, org_id, recipient, type, due_at, event_key)
        values ('msg_1', 'acme', 'delivered@simulator.mailroom.test', 'delivered', 7, 'k1')`.execute(db);
      if (opened.dialect === 'sqlite') await sql`pragma foreign_keys = on`.execute(db);
      await sql`delete from messages where id = 'msg_1'`.execute(db);
      for (const table of tables) {
        const n = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db);
        expect(Number(n.rows[0]?.n), table).toBe(0);
      }
    } finally {
      await opened.file?.close();
      await db.destroy();
    }
  });
});
