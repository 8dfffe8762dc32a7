import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * The request log (issue 29): refused public API requests (4xx), one row each, per organization.
 * - `id`: `rql_` + 12 hex digits of the millisecond clock + random (newSortableId), so rows land
 *   at the right edge of the primary key's B-tree as messages do.
 * - `route`: the route pattern (`/v1/send`, `/api/v1.0/email/send`), never the URL as sent (ids,
 *   query strings with status tokens).
 * - `fields`: JSON of the request's non-secret fields, at most 2 KiB (src/http/refused-fields.ts).
 * - `ip`: the client address by the app's trust-proxy rule (MAILROOM_TRUST_PROXY), as the per-IP limit sees it.
 * No foreign key to organizations: a batch of rows for an organization deleted meanwhile would
 * fail whole; rows of a deleted organization go with retention (MAILROOM_REQUEST_LOG_DAYS, 3).
 * Indexes: the list, newest first per organization (org_id, created_at, id), and the same per
 * status and per code; retention's purge by age across organizations (created_at).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  const s = db.schema;
  await s
    .createTable('request_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .execute();
  await s.createIndex('request_log_org_time').on('request_log').columns(['org_id', 'created_at', 'id']).execute();
  // The two filters an operator hunts with ("the 422s", "recipient_suppressed") walk an index of
  // their own: through the list's index a rare or mistyped one reads every row of the organization
  // (bench/request-log.ts). Writes are capped at 60 rows per organization a minute, so two more
  // entries per row cost little.
  await s.createIndex('request_log_org_status').on('request_log').columns(['org_id', 'status', 'created_at', 'id']).execute();
  await s.createIndex('request_log_org_code').on('request_log').columns(['org_id', 'code', 'created_at', 'id']).execute();
  await s.createIndex('request_log_created').on('request_log').column('created_at').execute();
}
