import type { Kysely } from 'kysely';

/**
 * Key rotation with a grace period (issue 11): `expires_at` is the moment a rotated or revoked
 * key stops authenticating. A rotated key keeps working until then, so clients can move to the
 * new key without an outage. Rows rotated before this migration stopped at rotation time, so
 * they get `revoked_at`; active keys keep NULL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('expires_at', 'bigint').execute();
  const keys = db as Kysely<{ api_keys: { status: string; revoked_at: number | null; expires_at: number | null } }>;
  await keys
    .updateTable('api_keys')
    .set((eb) => ({ expires_at: eb.ref('revoked_at') }))
    .where('status', '<>', 'active')
    .execute();
}
