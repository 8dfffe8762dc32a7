import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * SQLite's query planner, without statistics, chose the time index for a history page filtered
 * by status, template and dates, and read every message of the range to find a few bounced
 * ones: 4–5 ms a page at 1 M messages, 28 ms at worst (issue 16, goal 3). ANALYZE fixes the
 * choice, but costs ~0.5 s at 1 M messages (~0.35 s of it counting `messages`), growing with
 * size, on the one thread that accepts sends; and an empty database analyzed at install
 * teaches the planner nothing.
 *
 * So the statistics are written here, once, as SQLite documents for applications that want
 * stable plans (sqlite.org/optoverview.html, "Manual Control Of Query Plans Using SQLITE_STAT
 * Tables"): what ANALYZE measured on bench:scale's seed (1 M messages, 300 organizations, 30
 * days, every status and template), rounded. Each line is the rows of the table, then the rows
 * per distinct value of each prefix of the index's columns. The planner then knows that an
 * organization's messages of one status are a third of its messages and of one template a
 * half, and that a (org, status, created_at) range is the narrower walk.
 *
 * Only the tables a history page or a message read touches are described; the others are
 * small or read by primary key. An operator's own ANALYZE replaces these with measured ones,
 * which is as good. PostgreSQL's autovacuum analyzes on its own: nothing to do there. A later
 * migration that adds an index to these tables adds its line the same way.
 */
export const PLANNER_STATS: ReadonlyArray<readonly [table: string, index: string, stat: string]> = [
  ['messages', 'sqlite_autoindex_messages_1', '1000000 1'],
  ['messages', 'messages_org_time', '1000000 1000 1 1'],
  ['messages', 'messages_org_status_time', '1000000 1000 330 1 1'],
  ['messages', 'messages_org_template_time', '1000000 1000 500 1 1'],
  ['messages', 'messages_org_service_time', '1000000 1000 1000 1 1'],
  ['messages', 'messages_due', '1000000 1000 1000'],
  ['messages', 'messages_provider_message_id', '1000000 1000'],
  ['messages', 'messages_header_message_id', '1000000 1'],
  ['messages', 'messages_org_service_error', '50000 170 170 1'],
  ['messages', 'messages_created', '1000000 1'],
  ['message_recipients', 'recipients_org_email_time', '1000000 1000 2 1 1'],
  ['message_recipients', 'recipients_message', '1000000 1'],
  ['message_events', 'events_message', '2700000 3 1'],
  ['message_contents', 'sqlite_autoindex_message_contents_1', '1000000 1'],
  ['idempotency_records', 'sqlite_autoindex_idempotency_records_1', '33000 110 1'],
  ['idempotency_records', 'idempotency_expiry', '33000 1'],
];

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  // ANALYZE of the schema table alone creates sqlite_stat1 when missing, and costs nothing.
  await sql`analyze sqlite_schema`.execute(db);
  const tables = [...new Set(PLANNER_STATS.map(([table]) => table))];
  await sql`delete from sqlite_stat1 where tbl in (${sql.join(tables)})`.execute(db);
  // Samples from an earlier ANALYZE of these tables would no longer agree with the counts.
  const stat4 = await sql<{ n: number }>`select count(*) as n from sqlite_master where name = 'sqlite_stat4'`.execute(db);
  if (Number(stat4.rows[0]?.n ?? 0) > 0) await sql`delete from sqlite_stat4 where tbl in (${sql.join(tables)})`.execute(db);
  for (const [table, index, stat] of PLANNER_STATS) {
    await sql`insert into sqlite_stat1 (tbl, idx, stat) values (${table}, ${index}, ${stat})`.execute(db);
  }
  // Loads them into this connection's planner; other connections read them when they open.
  await sql`analyze sqlite_schema`.execute(db);
}
