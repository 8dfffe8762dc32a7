import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Custom request headers per webhook endpoint (issue 29), and what each attempt sent.
 *
 * - `webhook_endpoints.headers`: a JSON array of `{name, value}` (at most 10, checked by
 *   src/webhooks/custom-headers.ts), sent on every attempt, test event and replay. The values are
 *   secrets (a receiver behind basic auth): stored as the services' secrets are, in the row, and
 *   never shown on a read. Not null with the constant default `[]`: neither dialect rewrites the
 *   table (PostgreSQL ≥ 11 keeps the default in the catalog; SQLite edits the schema's text).
 * - `webhook_attempts.request_headers`: the headers of that attempt as a JSON object, custom
 *   values replaced by the mask (the signature headers are not secrets: an HMAC of the body).
 *   Null for attempts logged before this migration and for an attempt that sent nothing.
 *
 * Neither column is filtered on: no index.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('headers', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema.alterTable('webhook_attempts').addColumn('request_headers', 'text').execute();
}
