import type { Kysely } from 'kysely';
import { parseJson } from './json.js';
import type { Database } from './schema.js';
import type { TemplateFields } from './templates.js';

/** How many versions of one template are kept: enough to undo a bad afternoon, bounded per template. */
export const KEPT_TEMPLATE_VERSIONS = 50;

export interface TemplateVersion {
  version: number;
  fields: TemplateFields;
  created_at: number;
}

/**
 * Each content a template has had (migration 0007), written by templatesRepo.put with every
 * write and removed with the template (foreign key, on delete cascade).
 */
export function templateVersionsRepo(db: Kysely<Database>) {
  const what = (orgId: string, templateId: string, version: number) => `template version ${orgId}/${templateId}/${version}`;
  const toVersion =
    (orgId: string, templateId: string) =>
    (row: { version: number; fields: string; created_at: number }): TemplateVersion => {
      const fields = parseJson<TemplateFields>(row.fields, what(orgId, templateId, row.version));
      // A version stored before migration 0017 has no sample: none, as its template had.
      return {
        version: row.version,
        fields: { ...fields, sample_params: fields.sample_params ?? null },
        created_at: row.created_at,
      };
    };
  return {
    /** Stores `version` and drops those beyond the newest KEPT_TEMPLATE_VERSIONS. */
    async record(orgId: string, templateId: string, version: number, fields: TemplateFields, now: number): Promise<void> {
      await db
        .insertInto('template_versions')
        .values({ org_id: orgId, template_id: templateId, version, fields: JSON.stringify(fields), created_at: now })
        // Two writers storing the same unrecorded version (templatesRepo.put) store the same content.
        .onConflict((oc) => oc.columns(['org_id', 'template_id', 'version']).doNothing())
        .execute();
      const oldestKept = await db
        .selectFrom('template_versions')
        .select('version')
        .where('org_id', '=', orgId)
        .where('template_id', '=', templateId)
        .orderBy('version', 'desc')
        .limit(1)
        .offset(KEPT_TEMPLATE_VERSIONS - 1)
        .executeTakeFirst();
      if (oldestKept === undefined) return;
      await db
        .deleteFrom('template_versions')
        .where('org_id', '=', orgId)
        .where('template_id', '=', templateId)
        .where('version', '<', oldestKept.version)
        .execute();
    },

    /** Newest first. */
    async list(orgId: string, templateId: string): Promise<TemplateVersion[]> {
      const rows = await db
        .selectFrom('template_versions')
        .select(['version', 'fields', 'created_at'])
        .where('org_id', '=', orgId)
        .where('template_id', '=', templateId)
        .orderBy('version', 'desc')
        .execute();
      return rows.map(toVersion(orgId, templateId));
    },

    async has(orgId: string, templateId: string, version: number): Promise<boolean> {
      const row = await db
        .selectFrom('template_versions')
        .select('version')
        .where('org_id', '=', orgId)
        .where('template_id', '=', templateId)
        .where('version', '=', version)
        .executeTakeFirst();
      return row !== undefined;
    },

    async get(orgId: string, templateId: string, version: number): Promise<TemplateVersion | undefined> {
      const row = await db
        .selectFrom('template_versions')
        .select(['version', 'fields', 'created_at'])
        .where('org_id', '=', orgId)
        .where('template_id', '=', templateId)
        .where('version', '=', version)
        .executeTakeFirst();
      return row === undefined ? undefined : toVersion(orgId, templateId)(row);
    },
  };
}
