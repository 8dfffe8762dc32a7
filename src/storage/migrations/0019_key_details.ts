import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Key details (issue 29): `name` (nullable text, 1–100 characters when set), `scope` (`full` |
 * `send_only`; every key before this one could read, so `full`), `last_used_at` (milliseconds
 * since the epoch like every other time here, null until first used) and `created_by` (admin |
 * config | cli | bootstrap; null for keys made before anyone recorded it). Nullable columns and
 * a constant default: neither dialect rewrites the table (PostgreSQL ≥ 11; SQLite edits the
 * schema's text).
 *
 * `last_used_at` is written at most once a minute per key by every process that sees it used:
 * 0010's triggers bumped the catalog stamp on any update of `api_keys`, so each such write would
 * empty every process's catalog cache (with 300 keys in use, five times a second). The update
 * triggers now list the columns a send decides with, as 0010 does for `organizations`.
 */
const STAMPED_COLUMNS = [
  'id',
  'org_id',
  'type',
  'key_hash',
  'public_key',
  'hint',
  'status',
  'created_at',
  'revoked_at',
  'expires_at',
  'mode',
  'name',
  'scope',
  'created_by',
].join(', ');

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const s = db.schema;
  await s.alterTable('api_keys').addColumn('name', 'text').execute();
  await s
    .alterTable('api_keys')
    .addColumn('scope', 'text', (c) => c.notNull().defaultTo('full'))
    .execute();
  await s.alterTable('api_keys').addColumn('last_used_at', 'bigint').execute();
  await s.alterTable('api_keys').addColumn('created_by', 'text').execute();

  const bump = 'update catalog_stamp set stamp = stamp + 1 where id = 1';
  if (dialect === 'sqlite') {
    await sql.raw('drop trigger api_keys_update_stamp').execute(db);
    await sql
      .raw(`create trigger api_keys_update_stamp after update of ${STAMPED_COLUMNS} on api_keys begin ${bump}; end`)
      .execute(db);
    return;
  }
  await sql.raw('drop trigger api_keys_stamp on api_keys').execute(db);
  await sql
    .raw(
      `create trigger api_keys_stamp after insert or update of ${STAMPED_COLUMNS} or ` +
        'delete on api_keys for each statement execute function bump_catalog_stamp()',
    )
    .execute(db);
}
