import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Test mode (issue 27).
 * - `api_keys.mode`, `messages.mode`: live | test; every row before this one is live. PostgreSQL
 *   (≥ 11) adds a column with a constant default without rewriting the table; SQLite only
 *   rewrites the schema's text.
 * - `messages.simulated`: 0/1 like the other flags; 1 when a recipient is a simulator address.
 * - `messages_test`: (org_id, created_at, id) where mode = 'test', the test history's walk and the
 *   overview's test counts (live counts are all − test, so no existing index gains a column and
 *   live history plans stay as they were). Holds test messages only: empty on a deployment that
 *   never sends one. Building it reads the table once (~1.6 s per 10 M messages, as 0012's).
 * - `test_inbox`: each test message as composed, its bytes in the blob store.
 * - `simulator_events`: the simulator's events waiting for their time, once per event key.
 * Both new tables go with their message by cascade, so retention's purge needs no new step.
 */
export const TEST_INDEX_STAT: readonly [index: string, stat: string] = [
  'messages_test',
  // A 1 M-message table (0011's figures) with 1,000 test messages over 100 organizations.
  '1000 100 1 1',
];

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const s = db.schema;
  await s
    .alterTable('api_keys')
    .addColumn('mode', 'text', (c) => c.notNull().defaultTo('live'))
    .execute();
  await s
    .alterTable('messages')
    .addColumn('mode', 'text', (c) => c.notNull().defaultTo('live'))
    .execute();
  await s
    .alterTable('messages')
    .addColumn('simulated', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await s
    .createIndex('messages_test')
    .on('messages')
    .columns(['org_id', 'created_at', 'id'])
    .where(sql.ref('mode'), '=', sql.lit('test'))
    .execute();

  await s
    .createTable('test_inbox')
    .addColumn('message_id', 'text', (c) => c.primaryKey().references('messages.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('subject', 'text')
    .addColumn('from_addr', 'text', (c) => c.notNull())
    .addColumn('recipients', 'text', (c) => c.notNull())
    .addColumn('search', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('captured_at', 'bigint', (c) => c.notNull())
    .execute();
  await s.createIndex('test_inbox_org_time').on('test_inbox').columns(['org_id', 'created_at', 'message_id']).execute();

  await s
    .createTable('simulator_events')
    .addColumn('id', dialect === 'postgres' ? 'bigserial' : 'integer', (c) => c.primaryKey())
    .addColumn('message_id', 'text', (c) => c.notNull().references('messages.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('bounce_type', 'text')
    .addColumn('status', 'text')
    .addColumn('reason', 'text')
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('event_key', 'text', (c) => c.notNull().unique())
    .execute();
  await s.createIndex('simulator_events_due').on('simulator_events').column('due_at').execute();
  // The cascade from messages looks rows up by message_id: without an index each purged message
  // would scan the table.
  await s.createIndex('simulator_events_message').on('simulator_events').column('message_id').execute();

  if (dialect !== 'sqlite') return;
  // 0011's planner statistics: every later index of `messages` adds its line.
  const [index, stat] = TEST_INDEX_STAT;
  await sql`delete from sqlite_stat1 where tbl = 'messages' and idx = ${index}`.execute(db);
  await sql`insert into sqlite_stat1 (tbl, idx, stat) values ('messages', ${index}, ${stat})`.execute(db);
  await sql`analyze sqlite_schema`.execute(db);
}
