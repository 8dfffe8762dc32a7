import type { Kysely, Selectable, Updateable } from 'kysely';
import { DEFAULT_SECURITY, type Organization, type SecuritySettings } from '../domain/types.js';
import { creditModeColumn, outOfCreditModeColumn, planColumn } from './columns.js';
import { compiledOnce } from './compiled.js';
import type { Dialect } from './dialect.js';
import { bool, int, parseJson } from './json.js';
import type { Database, OrganizationsTable } from './schema.js';

export type OrganizationFields = Omit<Organization, 'id' | 'created_at' | 'updated_at'>;

function toRecord(row: Selectable<OrganizationsTable>): Organization {
  return {
    id: row.id,
    name: row.name,
    plan: planColumn(row.plan),
    credits: row.credits,
    credit_mode: creditModeColumn(row.credit_mode),
    overdraft: row.overdraft,
    when_out_of_credits: outOfCreditModeColumn(row.when_out_of_credits),
    hold_queue_limit: row.hold_queue_limit,
    email_verified: bool(row.email_verified),
    suspended: bool(row.suspended),
    // Settings added by later versions get their defaults on rows written before them.
    security: { ...DEFAULT_SECURITY, ...parseJson<Partial<SecuritySettings>>(row.security, `organization ${row.id}`) },
    captcha:
      row.captcha_site_key !== null && row.captcha_secret_key !== null
        ? { site_key: row.captcha_site_key, secret_key: row.captcha_secret_key }
        : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function toColumns(fields: Partial<OrganizationFields>): Updateable<OrganizationsTable> {
  const out: Updateable<OrganizationsTable> = {};
  if (fields.name !== undefined) out.name = fields.name;
  if (fields.plan !== undefined) out.plan = fields.plan;
  if (fields.credits !== undefined) out.credits = fields.credits;
  if (fields.credit_mode !== undefined) out.credit_mode = fields.credit_mode;
  if (fields.overdraft !== undefined) out.overdraft = fields.overdraft;
  if (fields.when_out_of_credits !== undefined) out.when_out_of_credits = fields.when_out_of_credits;
  if (fields.hold_queue_limit !== undefined) out.hold_queue_limit = fields.hold_queue_limit;
  if (fields.email_verified !== undefined) out.email_verified = int(fields.email_verified);
  if (fields.suspended !== undefined) out.suspended = int(fields.suspended);
  if (fields.security !== undefined) out.security = JSON.stringify(fields.security);
  if (fields.captcha !== undefined) {
    out.captcha_site_key = fields.captcha?.site_key ?? null;
    out.captcha_secret_key = fields.captcha?.secret_key ?? null;
  }
  return out;
}

/** Read on a catalog miss of the send path: compiled once (building it cost ~15–20 µs). */
const byId = compiledOnce<{ id: string }, Selectable<OrganizationsTable>>((db, p) =>
  db.selectFrom('organizations').selectAll().where('id', '=', p('id')),
);

export function organizationsRepo(db: Kysely<Database>, dialect: Dialect) {
  return {
    async get(id: string): Promise<Organization | undefined> {
      const row = (await byId(db, dialect, { id })).rows[0];
      return row === undefined ? undefined : toRecord(row);
    },

    async list(): Promise<Organization[]> {
      const rows = await db.selectFrom('organizations').selectAll().orderBy('id').execute();
      return rows.map(toRecord);
    },

    async insert(id: string, fields: OrganizationFields, now: number): Promise<Organization> {
      const columns = toColumns(fields) as Omit<OrganizationsTable, 'id' | 'created_at' | 'updated_at'>;
      await db
        .insertInto('organizations')
        .values({ ...columns, id, created_at: now, updated_at: now })
        .execute();
      return { ...fields, id, created_at: now, updated_at: now };
    },

    async update(id: string, fields: Partial<OrganizationFields>, now: number): Promise<boolean> {
      const result = await db
        .updateTable('organizations')
        .set({ ...toColumns(fields), updated_at: now })
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async delete(id: string): Promise<boolean> {
      const result = await db.deleteFrom('organizations').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
