import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Each recipient's own delivery state (issue 11 §3): a relay may accept some recipients of a
 * message and refuse others, and a retry must go to the refused ones only.
 * `pending` means "as the message": the hot path (a message every recipient of which was
 * accepted at once) writes nothing here; only a message whose recipients parted ways gets
 * explicit states. Rows already stored stay `pending`, which is what they were.
 * One column per statement: SQLite's ALTER TABLE adds a single column at a time.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('message_recipients')
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('pending'))
    .execute();
  await db.schema.alterTable('message_recipients').addColumn('reason', 'text').execute();
  await db.schema.alterTable('message_recipients').addColumn('updated_at', 'bigint').execute();
}
