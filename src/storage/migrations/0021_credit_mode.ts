import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * An organization's credit mode (issue 29): `metered` (the spec's credit rules, every row written
 * before) or `unlimited` (no credit taken, nothing held or refused for credits). Not null with a
 * default, so both dialects add it without rewriting the table (PostgreSQL ≥ 11 stores the default
 * in the catalog; SQLite only edits the schema's text).
 *
 * A send decides with it, so it joins the columns whose change bumps the catalog stamp (0010): the
 * organization triggers are made again with the column in their list, else a process would keep
 * holding sends of an organization another process switched to `unlimited`.
 */
const ORG_COLUMNS = [
  'name',
  'plan',
  'overdraft',
  'when_out_of_credits',
  'hold_queue_limit',
  'email_verified',
  'suspended',
  'security',
  'captcha_site_key',
  'captcha_secret_key',
  'credit_mode',
] as const;

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('organizations')
    .addColumn('credit_mode', 'text', (c) => c.notNull().defaultTo('metered'))
    .execute();
  const bump = 'update catalog_stamp set stamp = stamp + 1 where id = 1';
  const orgColumns = ORG_COLUMNS.join(', ');
  if (dialect === 'sqlite') {
    await sql.raw('drop trigger organizations_update_stamp').execute(db);
    await sql
      .raw(`create trigger organizations_update_stamp after update of ${orgColumns} on organizations begin ${bump}; end`)
      .execute(db);
    return;
  }
  await sql.raw('drop trigger organizations_stamp on organizations').execute(db);
  await sql
    .raw(
      `create trigger organizations_stamp after insert or update of ${orgColumns} or ` +
        `delete on organizations for each statement execute function bump_catalog_stamp()`,
    )
    .execute(db);
}
