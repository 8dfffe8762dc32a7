import { sql } from 'kysely';
import { openDatabase, type OpenedDatabase } from '../../src/storage/dialect.js';
import { MIGRATIONS } from '../../src/storage/migrations/index.js';
import type { TestDatabase } from './stores.js';

/**
 * A database as the migrations before `first` left it (`'0019'`: 0001 to 0018), with the
 * runner's bookkeeping saying so and organization `acme` in it: what migration `first` finds on a
 * deployment that stopped there. The caller inserts its own rows, runs `migrate(opened)` and
 * closes `opened.db`.
 */
export async function databaseBefore(database: TestDatabase, first: string): Promise<OpenedDatabase> {
  const opened = await openDatabase(database.url);
  const { db } = opened;
  await sql`create table if not exists mailroom_migrations (name text primary key, applied_at bigint not null)`.execute(db);
  for (const [name, up] of Object.entries(MIGRATIONS).sort(([a], [b]) => a.localeCompare(b))) {
    if (name >= first) break;
    await up(db as never, opened.dialect);
    await sql`insert into mailroom_migrations (name, applied_at) values (${name}, 0)`.execute(db);
  }
  await sql`insert into organizations (id, name, plan, credits, overdraft, when_out_of_credits, hold_queue_limit,
    email_verified, suspended, security, created_at, updated_at) values ('acme', 'Acme', 'pro', 0, 0, 'hold', 10, 1, 0, '{}',
    0, 0)`.execute(db);
  return opened;
}

/** A database as migration 0001 left it (databaseBefore 0002). */
export const databaseAt0001 = (database: TestDatabase): Promise<OpenedDatabase> => databaseBefore(database, '0002');
