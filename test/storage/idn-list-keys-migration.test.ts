import { sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { migrate } from '../../src/storage/dialect.js';
import { databaseAt0001 } from '../support/migrations.js';
import { freshDatabase, type TestDatabase } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Migration 0014 (issue 25): entries a deployment stored before the IDN rule, with a U-label
 * domain, are rekeyed to the A-label form the send path looks up; an entry whose canonical form
 * is listed already gives way to it. ASCII entries are not touched.
 */
describeDialects('migration 0014_idn_list_keys on %s', (dialect, skip) => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
  });

  it.skipIf(skip)(
    'rekeys U-label entries of both lists by canonicalAddress, keeping the canonical entry where both exist',
    async () => {
      const database = await freshDatabase(dialect);
      dbs.push(database);
      const opened = await databaseAt0001(database);
      const { db } = opened;
      try {
        const suppress = (email: string, reason: string, at: number) =>
          sql`insert into suppressions (org_id, email, reason, created_at) values ('acme', ${email}, ${reason}, ${at})`.execute(
            db,
          );
        const block = (value: string) =>
          sql`insert into block_list (org_id, value, created_at) values ('acme', ${value}, 0)`.execute(db);
        await suppress('zoë@exämple.com', 'manual', 1);
        await suppress('ann@exämple.org', 'manual', 2);
        await suppress('ann@xn--exmple-cua.org', 'hard_bounce', 3);
        await suppress('bob@example.com', 'complaint', 4);
        await block('@bücher.de');
        await block('kundennummer 4711');

        expect(await migrate(opened)).toContain('0014_idn_list_keys');
        const suppressions = await sql<{
          email: string;
          reason: string;
        }>`select email, reason from suppressions order by email`.execute(db);
        expect(suppressions.rows).toEqual([
          { email: 'ann@xn--exmple-cua.org', reason: 'hard_bounce' },
          { email: 'bob@example.com', reason: 'complaint' },
          { email: 'zoë@xn--exmple-cua.com', reason: 'manual' },
        ]);
        const blocked = await sql<{ value: string }>`select value from block_list order by value`.execute(db);
        expect(blocked.rows.map((r) => r.value)).toEqual(['@xn--bcher-kva.de', 'kundennummer 4711']);
      } finally {
        await db.destroy();
      }
    },
  );
});
