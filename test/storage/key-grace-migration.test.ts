import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../src/storage/dialect.js';
import * as m0001 from '../../src/storage/migrations/0001_initial.js';
import { DIALECTS, freshDatabase, postgresAvailable, type TestDatabase } from '../support/stores.js';

const pgUp = await postgresAvailable();

describe.each(DIALECTS)('migration 0003_key_grace on %s', (dialect) => {
  const skip = dialect === 'postgres' && !pgUp;
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
  });

  it.skipIf(skip)('keys rotated or revoked before it stopped at that moment; active keys have no end', async () => {
    const database = await freshDatabase(dialect);
    dbs.push(database);
    const opened = await openDatabase(database.url);
    const { db } = opened;
    try {
      // A database as 0001 left it, with the runner's bookkeeping saying so.
      await m0001.up(db as never, dialect);
      await sql`create table if not exists mailroom_migrations (name text primary key, applied_at bigint not null)`.execute(db);
      await sql`insert into mailroom_migrations (name, applied_at) values ('0001_initial', 0)`.execute(db);
      await sql`insert into organizations (id, name, plan, credits, overdraft, when_out_of_credits, hold_queue_limit,
        email_verified, suspended, security, created_at, updated_at) values ('acme', 'Acme', 'pro', 0, 0, 'hold', 10, 1, 0, '{}', 0, 0)`.execute(db);
      const key = (id: string, status: string, revokedAt: number | null) => sql`insert into api_keys
        (id, org_id, type, key_hash, public_key, hint, status, created_at, revoked_at)
        values (${id}, 'acme', 'private', ${`hash_${id}`}, null, 'sk_…', ${status}, 0, ${revokedAt})`.execute(db);
      await key('key_active', 'active', null);
      await key('key_rotated', 'rotated', 5000);
      await key('key_revoked', 'revoked', 7000);

      expect(await migrate(opened)).toContain('0003_key_grace');
      const rows = await db.selectFrom('api_keys').select(['id', 'expires_at']).orderBy('id').execute();
      expect(rows.map((r) => [r.id, r.expires_at === null ? null : Number(r.expires_at)])).toEqual([
        ['key_active', null], ['key_revoked', 7000], ['key_rotated', 5000],
      ]);
    } finally {
      await db.destroy();
    }
  });
});
