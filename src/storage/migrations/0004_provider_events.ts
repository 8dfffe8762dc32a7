import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Events after hand-off (issue 12):
 * - `provider_events`: every verified event, stored as it was read (the durable record, and the
 *   deduplication key: providers retry, and the same (source, scope, event_key) is recorded
 *   once). `scope` is the service whose verified webhook brought the event, so one tenant's
 *   events (valid credentials of its own, guessable keys such as Postmark's sequential bounce
 *   ids) can never pre-claim another tenant's keys; for DSN/ARF reports the message their VERP
 *   token is MAC'd to (src/events/record.ts dedupeScope). `message_id` is null for an event
 *   that matched no message; it is kept all the same, until retention purges it by received_at.
 * - `messages.provider_message_id`: the provider's id for the message, reported by the
 *   transport at hand-off (an SMTP relay's 250 reply, a provider API's answer); events name it.
 *   Indexed, as is `header_message_id`, the fallback match (both are looked up per event).
 * - `suppressions.message_id`: the message whose bounce or complaint suppressed the address.
 * One column per statement: SQLite's ALTER TABLE adds a single column at a time. Recipient
 * states need no column: message_recipients.state (migration 0002) is TEXT and gains values.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('provider_events')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('event_key', 'text', (c) => c.notNull())
    .addColumn('service_id', 'text')
    .addColumn('org_id', 'text')
    .addColumn('message_id', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('provider_events_pk', ['source', 'scope', 'event_key'])
    .execute();
  await db.schema.createIndex('provider_events_message').on('provider_events').column('message_id').execute();
  await db.schema.createIndex('provider_events_org_time').on('provider_events').columns(['org_id', 'received_at']).execute();
  // Retention finds unmatched events (no message to go with) by their age.
  await db.schema.createIndex('provider_events_received').on('provider_events').column('received_at').execute();
  await db.schema.alterTable('messages').addColumn('provider_message_id', 'text').execute();
  await db.schema.createIndex('messages_provider_message_id').on('messages').column('provider_message_id').execute();
  await db.schema.createIndex('messages_header_message_id').on('messages').column('header_message_id').execute();
  await db.schema.alterTable('suppressions').addColumn('message_id', 'text').execute();
}
