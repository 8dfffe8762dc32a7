import fs from 'node:fs';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../src/storage/dialect.js';
import { GroupCommit } from '../../src/storage/group-commit.js';
import { WalKeeper } from '../../src/storage/wal-keeper.js';
import { freshDatabase, type TestDatabase } from '../support/stores.js';

/**
 * Issue 25 §2: under sustained writes a PASSIVE checkpoint never catches the writer, so the WAL
 * never started over and grew to the writer's backstop (210 MB). The same at a smaller scale:
 * the keeper resets the WAL past RESET_AT, and the file stays near it while ~10× that is
 * written, with another connection reading the whole time.
 */
const RESET_AT = 4 * 1024 * 1024;
/** The transaction that crosses RESET_AT, and one more if a reset is refused for a moment. */
const BOUND = 2 * RESET_AT;
const WRITTEN = 40 * 1024 * 1024;

describe('SQLite WAL under sustained writes', () => {
  let database: TestDatabase | undefined;
  const closers: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
    await database?.drop();
  });

  it('stays bounded while writes never pause and a reader holds read transactions on and off', async () => {
    database = await freshDatabase('sqlite');
    const file = database.url.slice('sqlite:'.length);
    const opened = await openDatabase(database.url);
    closers.push(() => opened.db.destroy());
    await migrate(opened);
    await sql`create table scratch (k text not null, v text not null)`.execute(opened.db);
    await sql`create index scratch_k on scratch (k)`.execute(opened.db);
    const keeper = new WalKeeper(file, { resetAtBytes: RESET_AT, checkpointEveryMs: 50 });
    closers.push(() => keeper.close());
    const group = new GroupCommit(opened.db, keeper);

    // Another connection (a `mailroom worker` process, a GET) with a snapshot open 20 ms of every 25.
    const reader = new SqliteDatabase(file, { readonly: true });
    closers.push(() => { reader.close(); });
    let writing = true;
    const reading = (async () => {
      while (writing) {
        reader.prepare('begin').run();
        reader.prepare('select count(*) from scratch').get();
        await new Promise((r) => setTimeout(r, 20));
        reader.prepare('commit').run();
        await new Promise((r) => setTimeout(r, 5));
      }
    })();

    // 50 clients in a closed loop, each write ~3 KB of row plus its index entry.
    const row = 'x'.repeat(3_000);
    let written = 0;
    let largest = 0;
    const client = async (): Promise<void> => {
      while (written < WRITTEN) {
        await group.run((conn) => sql`insert into scratch (k, v) values (${Math.random().toString(36)}, ${row})`.execute(conn));
        written += row.length;
        largest = Math.max(largest, fs.statSync(`${file}-wal`).size);
      }
    };
    try {
      await Promise.all(Array.from({ length: 50 }, client));
    } finally {
      writing = false;
      await reading;
    }
    expect(largest).toBeGreaterThan(RESET_AT / 2);
    expect(largest).toBeLessThan(BOUND);
    // Every row is there: the resets lost nothing.
    const n = await sql<{ n: number }>`select count(*) as n from scratch`.execute(opened.db);
    expect(n.rows[0]?.n).toBe(written / row.length);
  }, 120_000);
});
