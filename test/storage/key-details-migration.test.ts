import { sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { migrate } from '../../src/storage/dialect.js';
import { describeDialects } from '../support/dialects.js';
import { databaseBefore } from '../support/migrations.js';
import { freshDatabase, type TestDatabase } from '../support/stores.js';

/**
 * Migration 0019 (issue 29) over a deployment at 0018 with a key: it reads full scope, no name,
 * never used, maker unknown. The catalog stamp moves on a key's catalog columns as before, and no
 * longer on `last_used_at`, which processes write once a minute per key.
 */
describeDialects('migration 0019_key_details on %s', (dialect, skip) => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
  });

  it.skipIf(skip)('existing keys read full, unnamed, unused; only catalog columns bump the stamp', async () => {
    const database = await freshDatabase(dialect);
    dbs.push(database);
    const opened = await databaseBefore(database, '0019');
    const { db } = opened;
    try {
      await sql`insert into api_keys (id, org_id, type, key_hash, public_key, hint, status, created_at)
        values ('key_1', 'acme', 'private', 'h1', null, 'sk_…0001', 'active', 0)`.execute(db);

      expect((await migrate(opened))[0]).toBe('0019_key_details');

      const rows = await sql<{
        name: string | null;
        scope: string;
        last_used_at: number | null;
        created_by: string | null;
      }>`select name, scope, last_used_at, created_by from api_keys`.execute(db);
      expect(rows.rows).toEqual([{ name: null, scope: 'full', last_used_at: null, created_by: null }]);

      const stamp = async () =>
        Number((await sql<{ stamp: number | string }>`select stamp from catalog_stamp where id = 1`.execute(db)).rows[0]?.stamp);
      const before = await stamp();
      await sql`update api_keys set last_used_at = 1000 where id = 'key_1'`.execute(db);
      expect(await stamp()).toBe(before);
      await sql`update api_keys set name = 'Web' where id = 'key_1'`.execute(db);
      expect(await stamp()).toBe(before + 1);
      await sql`update api_keys set scope = 'send_only' where id = 'key_1'`.execute(db);
      await sql`update api_keys set status = 'revoked' where id = 'key_1'`.execute(db);
      expect(await stamp()).toBe(before + 3);
      await sql`insert into api_keys (id, org_id, type, key_hash, public_key, hint, status, created_at)
        values ('key_2', 'acme', 'private', 'h2', null, 'sk_…0002', 'active', 0)`.execute(db);
      await sql`delete from api_keys where id = 'key_2'`.execute(db);
      expect(await stamp()).toBe(before + 5);
    } finally {
      await opened.file?.close();
      await db.destroy();
    }
  });
});
