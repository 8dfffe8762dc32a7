import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { storageTrouble } from '../../src/errors/storage-trouble.js';
import { migrate, openDatabase } from '../../src/storage/dialect.js';
import { GroupCommit } from '../../src/storage/group-commit.js';
import { freshDatabase, type TestDatabase } from '../support/stores.js';

/**
 * Issue 25 §3 at the unit level: SQLite's `max_page_count` makes the database refuse to grow
 * with a real SQLITE_FULL, as a full disk does (test/storage/full-disk.test.ts fills a real one).
 */
describe('SQLite group commit on a full database', () => {
  let database: TestDatabase | undefined;
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
    await database?.drop();
  });

  async function open() {
    database = await freshDatabase('sqlite');
    const opened = await openDatabase(database.url);
    closers.push(() => opened.db.destroy());
    if (opened.file !== undefined) closers.push(() => opened.file?.close() ?? Promise.resolve());
    await migrate(opened);
    await sql`create table scratch (k text not null, v text not null)`.execute(opened.db);
    return { db: opened.db, group: new GroupCommit(opened.db, opened.file) };
  }

  const row = 'x'.repeat(3_000);

  it('fails every write of the batch as storage_full (SQLITE_FULL), then writes again as soon as there is room', async () => {
    const { db, group } = await open();
    const pages = (await sql<{ page_count: number }>`pragma page_count`.execute(db)).rows[0]?.page_count ?? 0;
    await sql.raw(`pragma max_page_count = ${pages + 5}`).execute(db);
    const full = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        group.run((conn) => sql`insert into scratch (k, v) values (${String(i)}, ${row})`.execute(conn)),
      ),
    );
    const refused = full.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(refused.length).toBeGreaterThan(0);
    for (const err of refused) {
      expect(String(err)).toMatch(/database or disk is full/);
      expect(storageTrouble(err)).toBe('storage_full');
    }
    // Room again: the very next writes all commit, on the same connection.
    await sql.raw('pragma max_page_count = 1000000').execute(db);
    const again = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        group.run((conn) => sql`insert into scratch (k, v) values (${`again ${i}`}, ${row})`.execute(conn)),
      ),
    );
    expect(again.filter((r) => r.status === 'rejected')).toEqual([]);
    const n = await sql<{ n: number }>`select count(*) as n from scratch where k like 'again %'`.execute(db);
    expect(n.rows[0]?.n).toBe(30);
  });

  it('a transaction left open on the connection (ROLLBACK failed) is rolled back, not failing every later batch', async () => {
    const { db, group } = await open();
    await sql`begin`.execute(db);
    await sql`insert into scratch (k, v) values ('left', 'open')`.execute(db);
    for (let i = 0; i < 3; i++)
      await group.run((conn) => sql`insert into scratch (k, v) values (${`after ${i}`}, 'v')`.execute(conn));
    const rows = await sql<{ k: string }>`select k from scratch order by rowid`.execute(db);
    expect(rows.rows.map((r) => r.k)).toEqual(['after 0', 'after 1', 'after 2']);
  });
});
