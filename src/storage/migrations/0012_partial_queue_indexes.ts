import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Three indexes of `messages` now hold only the rows their readers look for (issue 16, goals 1,
 * 3 and 4). A message spends milliseconds queued or sending and the rest of its life sent,
 * delivered or bounced, yet every message had an entry in the (status, next_attempt_at) index
 * and, with a NULL, in the provider id index.
 * - `messages_due`: (next_attempt_at) where status = 'queued', the claim's walk, due first.
 * - `messages_leased`: (lease_until) where status = 'sending', the reaper's. The two shared one
 *   index before, by its leading status.
 * - `messages_provider_message_id`: where provider_message_id is not null, the lookup of a
 *   provider's event (which always names an id).
 *
 * What each write saves:
 * - A send no longer writes a NULL into the provider id index: one B-tree fewer on the accept
 *   path on SQLite (about 12 page writes a send before).
 * - Marking a message sent no longer inserts it into a due index. On PostgreSQL no message update
 *   is HOT (status is indexed), so each one inserts the new row version into every index whose
 *   predicate it meets: a claim wrote 9 index entries and a mark-sent 9; now 8 and 7 (with no
 *   provider id, as SMTP relays rarely give one).
 * - At 10 M messages the two indexes were ~10 M entries each; now a few thousand, which the page
 *   cache keeps instead.
 *
 * Statements that must use a partial index spell its predicate as a literal (status = 'queued',
 * not a bound parameter): SQLite can only match a partial index against the statement's own text.
 * test/storage/partial-indexes.test.ts reads each plan. Building them reads the table once per
 * index: 1.6 s each for 10 M messages on SQLite (bench:scale's seed). On PostgreSQL sends wait
 * meanwhile, as CREATE INDEX CONCURRENTLY cannot run in a migration's transaction.
 */
export const PARTIAL_INDEX_STATS: ReadonlyArray<readonly [index: string, stat: string]> = [
  // A queue a few thousand deep at most; each due time shared by few messages.
  ['messages_due', '1000 1'],
  ['messages_leased', '100 1'],
  ['messages_provider_message_id', '1000000 1'],
];

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const s = db.schema;
  await s.dropIndex('messages_due').execute();
  await s
    .createIndex('messages_due')
    .on('messages')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', sql.lit('queued'))
    .execute();
  await s
    .createIndex('messages_leased')
    .on('messages')
    .column('lease_until')
    .where(sql.ref('status'), '=', sql.lit('sending'))
    .execute();
  await s.dropIndex('messages_provider_message_id').execute();
  await s
    .createIndex('messages_provider_message_id')
    .on('messages')
    .column('provider_message_id')
    .where(sql.ref('provider_message_id'), 'is not', null)
    .execute();
  if (dialect !== 'sqlite') return;
  // The planner statistics of 0011, for the indexes as they are now.
  await sql`delete from sqlite_stat1 where tbl = 'messages' and idx in
    (${sql.join(PARTIAL_INDEX_STATS.map(([index]) => index))})`.execute(db);
  for (const [index, stat] of PARTIAL_INDEX_STATS) {
    await sql`insert into sqlite_stat1 (tbl, idx, stat) values ('messages', ${index}, ${stat})`.execute(db);
  }
  await sql`analyze sqlite_schema`.execute(db);
}
