import { sql } from 'kysely';
import { openDatabase, type OpenedDatabase } from '../../src/storage/dialect.js';
import * as m0001 from '../../src/storage/migrations/0001_initial.js';
import type { TestDatabase } from './stores.js';

/**
 * A database as migration 0001 left it, with the runner's bookkeeping saying so and organization
 * `acme` in it: what a later migration finds on a deployment that ran 0001 only. The caller
 * inserts its own rows, runs `migrate(opened)` and closes `opened.db`.
 */
export async function databaseAt0001(database: TestDatabase): Promise<OpenedDatabase> {
  const opened = await openDatabase(database.url);
  const { db } = opened;
  await m0001.up(db as never, opened.dialect);
  await sql`create table if not exists mailroom_migrations (name text primary key, applied_at bigint not null)`.execute(db);
  await sql`insert into mailroom_migrations (name, applied_at) values ('0001_initial', 0)`.execute(db);
  await sql`insert into organizations (id, name, plan, credits, overdraft, when_out_of_credits, hold_queue_limit,
    email_verified, suspended, security, created_at, updated_at) values ('acme', 'Acme', 'pro', 0, 0, 'hold', 10, 1, 0, '{}',
    0, 0)`.execute(db);
  return opened;
}
