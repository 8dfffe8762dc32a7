import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Alerts (issue 29; src/domain/alerts.ts):
 * - `alert_settings`: one row per organization that changed its settings; none: the defaults.
 *   Rate thresholds in percent (double precision; null: that alert off), flags 0/1 like the other tables.
 * - `alert_states`: one row per alert firing now, primary key (org_id, kind, subject). Firing is
 *   an INSERT … ON CONFLICT DO NOTHING and resolving a DELETE … RETURNING: of two workers (or two
 *   processes' breakers) seeing the same crossing, exactly one writes the row and sends the event.
 * - `alert_events`: what fired and resolved, newest first per organization (org_id, at, id) for
 *   the overview; purged by age with the messages' retention (at).
 * Their webhook deliveries are rows of webhook_deliveries with the body fixed at insert and
 * `event_id` = −(alert event id): message events' ids are positive, so the unique (org_id,
 * endpoint_id, event_id) index still means one delivery per event and endpoint, and the
 * dispatcher's claim, the backlog metrics and replays treat them as queued events.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const s = db.schema;
  await s
    .createTable('alert_settings')
    .addColumn('org_id', 'text', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .addColumn('bounce_rate_percent', 'double precision')
    .addColumn('complaint_rate_percent', 'double precision')
    .addColumn('min_sample', 'integer', (c) => c.notNull())
    .addColumn('window_hours', 'integer', (c) => c.notNull())
    .addColumn('breaker_open', 'integer', (c) => c.notNull())
    .addColumn('endpoint_disabled', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await s
    .createTable('alert_states')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('since', 'bigint', (c) => c.notNull())
    .addColumn('event_id', 'bigint', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('alert_states_pk', ['org_id', 'kind', 'subject'])
    .execute();
  await s
    .createTable('alert_events')
    .addColumn('id', dialect === 'postgres' ? 'bigserial' : 'integer', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .execute();
  await s.createIndex('alert_events_org_time').on('alert_events').columns(['org_id', 'at', 'id']).execute();
  await s.createIndex('alert_events_at').on('alert_events').column('at').execute();
}
