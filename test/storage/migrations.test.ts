import { afterAll, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../src/storage/dialect.js';
import { MIGRATIONS } from '../../src/storage/migrations/index.js';
import { freshDatabase, type TestDatabase } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

const ALL = Object.keys(MIGRATIONS).sort();

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
    try {
      const applied = await Promise.all(opened.map((o) => migrate(o)));
      expect(applied.flat().sort()).toEqual(ALL);
    } finally {
      await Promise.all(opened.map(({ db }) => db.destroy()));
    }
  });
});
