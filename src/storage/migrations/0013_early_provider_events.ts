import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Events that arrive before their message is settled (issue 25, 8): a provider can report a
 * bounce before the worker has written `sent`, and the event then names the provider's message
 * id, which the database learns only in that write. Such an event is stored unmatched; the
 * worker's settle finds it by this column and applies it in the same transaction
 * (src/events/early.ts).
 * - `provider_events.provider_message_id`: the id the event names (ProviderEvent.match), kept
 *   for every new event. Events stored before this migration keep null: an unmatched event that
 *   old belongs to a message settled long ago, which no settle will look for again.
 * - `provider_events_unmatched_provider_id`: (org_id, provider_message_id) of unmatched events
 *   only, the settle's lookup. Partial: nearly every event matches at once and never needs it.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('provider_events').addColumn('provider_message_id', 'text').execute();
  await db.schema
    .createIndex('provider_events_unmatched_provider_id')
    .on('provider_events')
    .columns(['org_id', 'provider_message_id'])
    .where(sql.ref('message_id'), 'is', null)
    .execute();
}
