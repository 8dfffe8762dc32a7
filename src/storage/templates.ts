import type { Kysely, Selectable } from 'kysely';
import type { ParamSpec, Template } from '../domain/types.js';
import { bool, int, parseJson } from './json.js';
import { compiledOnce } from './compiled.js';
import type { Dialect } from './dialect.js';
import type { Database, TemplatesTable } from './schema.js';
import { templateVersionsRepo } from './template-versions.js';

export type TemplateFields = Omit<Template, 'org_id' | 'id' | 'version' | 'created_at' | 'updated_at'>;

function toRecord(row: Selectable<TemplatesTable>): Template {
  return {
    org_id: row.org_id,
    id: row.id,
    name: row.name,
    service_id: row.service_id,
    subject: row.subject,
    to: row.to_addr,
    cc: row.cc,
    bcc: row.bcc,
    from_name: row.from_name,
    from_email: row.from_email,
    reply_to: row.reply_to,
    html: row.html,
    text: row.text,
    params: parseJson<ParamSpec[]>(row.params, `template ${row.org_id}/${row.id}`),
    sample_params:
      row.sample_params === null
        ? null
        : parseJson<Record<string, unknown>>(row.sample_params, `template ${row.org_id}/${row.id} sample_params`),
    captcha: bool(row.captcha),
    allow_dynamic_recipients: bool(row.allow_dynamic_recipients),
    allow_attachments: bool(row.allow_attachments),
    strict_params: bool(row.strict_params),
    enforce_link_allowlist: bool(row.enforce_link_allowlist),
    frozen: bool(row.frozen),
    version: row.version,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function toColumns(f: TemplateFields) {
  return {
    name: f.name,
    service_id: f.service_id,
    subject: f.subject,
    to_addr: f.to,
    cc: f.cc,
    bcc: f.bcc,
    from_name: f.from_name,
    from_email: f.from_email,
    reply_to: f.reply_to,
    html: f.html,
    text: f.text,
    params: JSON.stringify(f.params),
    sample_params: f.sample_params === null ? null : JSON.stringify(f.sample_params),
    captcha: int(f.captcha),
    allow_dynamic_recipients: int(f.allow_dynamic_recipients),
    allow_attachments: int(f.allow_attachments),
    strict_params: int(f.strict_params),
    enforce_link_allowlist: int(f.enforce_link_allowlist),
    frozen: int(f.frozen),
  };
}

/** Read on a catalog miss of the send path: compiled once (building it cost ~15–20 µs). */
const byId = compiledOnce<{ org_id: string; id: string }, Selectable<TemplatesTable>>((db, p) =>
  db.selectFrom('templates').selectAll().where('org_id', '=', p('org_id')).where('id', '=', p('id')),
);

export function templatesRepo(db: Kysely<Database>, dialect: Dialect) {
  const versions = templateVersionsRepo(db);
  /**
   * A template last written before versions were kept (migration 0007) has no row for the
   * content about to be replaced: it is stored first, so the edit can be undone.
   */
  const keepUnrecorded = async (orgId: string, id: string): Promise<void> => {
    const row = await db.selectFrom('templates').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    if (row === undefined || (await versions.has(orgId, id, row.version))) return;
    const { org_id: _o, id: _i, version, created_at: _c, updated_at, ...fields } = toRecord(row);
    await versions.record(orgId, id, version, fields, updated_at);
  };
  return {
    async get(orgId: string, id: string): Promise<Template | undefined> {
      const row = (await byId(db, dialect, { org_id: orgId, id })).rows[0];
      return row === undefined ? undefined : toRecord(row);
    },

    async list(orgId: string): Promise<Template[]> {
      const rows = await db.selectFrom('templates').selectAll().where('org_id', '=', orgId).orderBy('id').execute();
      return rows.map(toRecord);
    },

    /** Whether any template of the organization accepts dynamic attachments (public uploads). */
    async anyAllowsAttachments(orgId: string): Promise<boolean> {
      const row = await db
        .selectFrom('templates')
        .select('id')
        .where('org_id', '=', orgId)
        .where('allow_attachments', '=', 1)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    /**
     * Creates or replaces; the version moves on every write, which retires cached renderers.
     * Every write also stores the version it made (template-versions.ts), whoever wrote it:
     * the admin API, a restore or the config file.
     */
    async put(orgId: string, id: string, fields: TemplateFields, now: number): Promise<'created' | 'updated'> {
      await keepUnrecorded(orgId, id);
      const columns = toColumns(fields);
      const updated = await db
        .updateTable('templates')
        .set((eb) => ({ ...columns, version: eb('version', '+', 1), updated_at: now }))
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .returning('version')
        .executeTakeFirst();
      if (updated !== undefined) {
        await versions.record(orgId, id, updated.version, fields, now);
        return 'updated';
      }
      await db
        .insertInto('templates')
        .values({ ...columns, org_id: orgId, id, version: 1, created_at: now, updated_at: now })
        .execute();
      await versions.record(orgId, id, 1, fields, now);
      return 'created';
    },

    async delete(orgId: string, id: string): Promise<boolean> {
      const r = await db.deleteFrom('templates').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      return r.numDeletedRows > 0n;
    },
  };
}
