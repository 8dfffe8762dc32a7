import type { Kysely } from 'kysely';

/**
 * The operator UI (issue 15):
 * - `admin_sessions`: a signed-in browser. The cookie carries a random 32-byte id; only its
 *   SHA-256 is stored, so a copy of the database signs nobody in. `csrf_token` is handed to the
 *   page (never the admin token) and must come back in X-CSRF-Token on every state-changing
 *   call made with the cookie. Rows are shared by every process of one database, so a sign-in
 *   on one `mailroom serve` holds on the others and a sign-out ends it everywhere.
 * - `template_versions`: each content a template has had, one row per version written (PUT,
 *   PATCH, restore, the declarative file), so the editor can show history and restore one.
 *   `fields` is the TemplateFields JSON of that version.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const s = db.schema;
  await s
    .createTable('admin_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await s.createIndex('admin_sessions_expiry').on('admin_sessions').column('expires_at').execute();

  await s
    .createTable('template_versions')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('template_versions_pk', ['org_id', 'template_id', 'version'])
    .addForeignKeyConstraint('template_versions_template', ['org_id', 'template_id'], 'templates', ['org_id', 'id'], (c) =>
      c.onDelete('cascade'),
    )
    .execute();
}
