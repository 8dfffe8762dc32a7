import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Outbound webhooks (issue 13):
 * - `webhook_endpoints`: an organization's receivers. `events` is `*` or a comma-wrapped list
 *   (`,message.sent,message.delivered,`) so one LIKE in the fan-out finds the subscribers of an
 *   event on both dialects. The secret is kept as it is (HMAC needs it); after a rotation the
 *   previous one signs too until `previous_secret_expires_at`. `failing_since`: the first
 *   failure after the last success (an endpoint failing for the configured time is disabled).
 * - `webhook_deliveries`: the outbox. One row per (endpoint, message event), written by the same
 *   statement batch, in the same transaction, as the event (src/storage/webhook-outbox.ts), so a
 *   crash loses none. Claimed with a lease like messages. `event_id` is null only for
 *   `webhook.test`. No foreign key to messages: retention deletes them with their message, in
 *   slices, as it does provider events (a cascade would make every purge dearer).
 * - `webhook_attempts`: the delivery log, one row per HTTP attempt.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const s = db.schema;
  await s
    .createTable('webhook_endpoints')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'bigint')
    .addColumn('failing_since', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_endpoints_pk', ['org_id', 'id'])
    .execute();

  await s
    .createTable('webhook_deliveries')
    .addColumn('id', dialect === 'postgres' ? 'bigserial' : 'integer', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'bigint')
    .addColumn('message_id', 'text')
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('message_status', 'text')
    .addColumn('sequence', 'integer')
    .addColumn('payload', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('lease_until', 'bigint')
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addForeignKeyConstraint(
      'webhook_deliveries_endpoint',
      ['org_id', 'endpoint_id'],
      'webhook_endpoints',
      ['org_id', 'id'],
      (c) => c.onDelete('cascade'),
    )
    .execute();
  // One delivery per (endpoint, event): a replay of a range finds the rows it resets by it.
  await s
    .createIndex('webhook_deliveries_event')
    .unique()
    .on('webhook_deliveries')
    .columns(['org_id', 'endpoint_id', 'event_id'])
    .execute();
  // The claim (state pending, due first), like messages_due.
  await s.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
  // The log, newest first per endpoint; and retention, by message and by age.
  await s
    .createIndex('webhook_deliveries_log')
    .on('webhook_deliveries')
    .columns(['org_id', 'endpoint_id', 'created_at', 'id'])
    .execute();
  await s.createIndex('webhook_deliveries_message').on('webhook_deliveries').column('message_id').execute();
  await s.createIndex('webhook_deliveries_created').on('webhook_deliveries').column('created_at').execute();

  await s
    .createTable('webhook_attempts')
    .addColumn('delivery_id', 'bigint', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'text')
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'attempt'])
    .execute();
}
