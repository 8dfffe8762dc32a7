import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * SMTP submission (issue 28, lead's decision L4): a submitted message's bytes, delivered as
 * submitted, in a nullable column of its content row; null for every other message. In the row
 * (not the blob store) so the 250 reply's durability is the transaction's: the disk blob store's
 * put has no fsync, and a row cannot leave an orphan blob. Read per attempt, never by the claim
 * (a batch of 50 × 22.6 MB would be over 1 GB). Both dialects add a nullable column without
 * rewriting the table (PostgreSQL ≥ 11; SQLite only edits the schema's text).
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('message_contents')
    .addColumn('mime', dialect === 'postgres' ? 'bytea' : 'blob')
    .execute();
}
