import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Outages made visible (issue 29): a message is "retrying" while it is queued or sending after
 * an attempt that failed (`last_error` set: deferred, or queued again after its service's
 * error). Lists filtered to retrying messages and the overview's oldest one walk this partial
 * index, which holds only those rows: a few thousand during an outage, none otherwise, against
 * the 1 M-message table of 0011's figures. Statements that use it spell its predicate as
 * literals (RETRYING in src/storage/history.ts): SQLite matches a partial index only against
 * the statement's own text. Building it reads the table once (~1.6 s at 10 M messages on
 * SQLite, as 0012's did).
 */
export const RETRYING_INDEX_STAT: readonly [index: string, stat: string] = [
  'messages_org_retrying',
  // 1,000 retrying messages over 100 organizations, each (created_at, id) unique.
  '1000 10 1 1',
];

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createIndex('messages_org_retrying')
    .on('messages')
    .columns(['org_id', 'created_at', 'id'])
    .where((eb) =>
      eb.and([eb(sql.ref('status'), 'in', [sql.lit('queued'), sql.lit('sending')]), eb(sql.ref('last_error'), 'is not', null)]),
    )
    .execute();
  if (dialect !== 'sqlite') return;
  const [index, stat] = RETRYING_INDEX_STAT;
  await sql`delete from sqlite_stat1 where tbl = 'messages' and idx = ${index}`.execute(db);
  await sql`insert into sqlite_stat1 (tbl, idx, stat) values ('messages', ${index}, ${stat})`.execute(db);
  await sql`analyze sqlite_schema`.execute(db);
}
