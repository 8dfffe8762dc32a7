import { sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { migrate } from '../../src/storage/dialect.js';
import { databaseAt0001 } from '../support/migrations.js';
import { freshDatabase, type TestDatabase } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

describeDialects('migration 0003_key_grace on %s', (dialect, skip) => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
  });

  it.skipIf(skip)('keys rotated or revoked before it stopped at that moment; active keys have no end', async () => {
    const database = await freshDatabase(dialect);
    dbs.push(database);
    const opened = await databaseAt0001(database);
    const { db } = opened;
    try {
      const key = (id: string, status: string, revokedAt: number | null) =>
        sql`insert into api_keys
        (id, org_id, type, key_hash, public_key, hint, status, created_at, revoked_at)
        values (${id}, 'acme', 'private', ${`hash_${id}`}, null, 'sk_…', ${status}, 0, ${revokedAt})`.execute(db);
      await key('key_active', 'active', null);
      await key('key_rotated', 'rotated', 5000);
      await key('key_revoked', 'revoked', 7000);

      expect(await migrate(opened)).toContain('0003_key_grace');
      const rows = await db.selectFrom('api_keys').select(['id', 'expires_at']).orderBy('id').execute();
      expect(rows.map((r) => [r.id, r.expires_at === null ? null : Number(r.expires_at)])).toEqual([
        ['key_active', null],
        ['key_revoked', 7000],
        ['key_rotated', 5000],
      ]);
    } finally {
      await db.destroy();
    }
  });
});
