import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../src/storage/dialect.js';
import { MIGRATIONS } from '../../src/storage/migrations/index.js';
import { waitFor } from '../support/smtp-sink.js';
import { freshDatabase, PG_URL, type TestDatabase } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

const ALL = Object.keys(MIGRATIONS).sort();
/** src/storage/dialect.ts's MIGRATION_LOCK_ID (not exported): should it change, the race test times out waiting for waiters. */
const MIGRATION_LOCK_ID = 4_242_001;

describeDialects('migrations on %s', (dialect, skip) => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
  });

  it.skipIf(skip)('apply once, then report nothing to do', async () => {
    const database = await freshDatabase(dialect);
    dbs.push(database);
    const opened = await openDatabase(database.url);
    const { db } = opened;
    try {
      expect(await migrate(opened)).toEqual(ALL);
      expect(await migrate(opened)).toEqual([]);
    } finally {
      await db.destroy();
    }
  });

  // Separate processes on one SQLite file are covered by the CLI test (better-sqlite3 blocks the
  // event loop while it waits for a lock, so in-process concurrency would only deadlock itself).
  it.skipIf(skip || dialect === 'sqlite')('processes that start together apply each step exactly once', async () => {
    const database = await freshDatabase(dialect);
    dbs.push(database);
    const opened = await Promise.all([1, 2, 3].map(() => openDatabase(database.url)));
    // Each process's one pooled connection, the one migrate takes, by its backend pid.
    const pids = await Promise.all(
      opened.map(async ({ db }) => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]?.pid),
    );
    // The migration lock held here first, so the three must queue for it together (the race),
    // seen in pg_locks, rather than each finding the work done by one that ran before it.
    const holder = new pg.Client({ connectionString: PG_URL });
    await holder.connect();
    try {
      await holder.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
      const applying = Promise.all(opened.map((o) => migrate(o)));
      try {
        await waitFor(
          async () =>
            Number(
              (
                await holder.query<{ n: string }>(
                  "select count(*) as n from pg_locks where locktype = 'advisory' and not granted and pid = any($1)",
                  [pids],
                )
              ).rows[0]?.n,
            ) === 3,
          10_000,
          'the three to wait for the migration lock',
        );
      } finally {
        await holder.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
      }
      const applied = await applying;
      expect(applied.flat().sort()).toEqual(ALL);
    } finally {
      await holder.end();
      await Promise.all(opened.map(({ db }) => db.destroy()));
    }
  });
});
