import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * A template's sample parameters (issue 29): the JSON object the editor's preview and send test
 * use, stored with the template so an existing template with required parameters opens on a
 * rendered preview. Nullable text, like `params` a JSON document: null for every template written
 * before, and for any written without one. Template versions keep it inside their `fields` JSON,
 * so that table needs no column (a version stored before reads as null). Both dialects add a
 * nullable column without rewriting the table (PostgreSQL ≥ 11; SQLite only edits the schema's text).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('templates').addColumn('sample_params', 'text').execute();
}
