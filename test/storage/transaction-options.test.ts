import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/dialect.js';
import type { Database } from '../../src/storage/schema.js';
import { withoutFlush } from '../../src/storage/store.js';
import { seedOrg } from '../support/seed.js';
import { freshDatabase, freshStore, postgresAvailable, type TestStore } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

const pgUp = await postgresAvailable();

/**
 * The worker's bookkeeping transactions (`durable: false`, `background: true`) commit without
 * waiting for the flush; on PostgreSQL they are opened by hand (BEGIN and SET LOCAL in one round
 * trip), so they must still commit what resolves and roll back what throws, as any other.
 */
describeDialects('store.transaction options on %s', (dialect, skip) => {
  let t: TestStore;
  beforeEach(async () => {
    if (skip) return;
    t = await freshStore(dialect);
    await seedOrg(t.store);
  });
  afterEach(async () => {
    if (!skip) await t.cleanup();
  });

  const kinds = [
    { name: 'durable', options: {} },
    { name: 'durable: false', options: { durable: false } },
    { name: 'background', options: { background: true } },
  ];

  it.skipIf(skip).each(kinds)('$name: commits what resolves and returns its value', async ({ options }) => {
    const value = await t.store.transaction(async (tx) => {
      await tx.blockList.add('acme', 'kept@example.com', 1);
      return 'done';
    }, options);
    expect(value).toBe('done');
    expect(await t.store.blockList.list('acme')).toEqual(['kept@example.com']);
  });

  it.skipIf(skip).each(kinds)('$name: rolls back every write of a transaction that throws, and rethrows', async ({ options }) => {
    await expect(
      t.store.transaction(async (tx) => {
        await tx.blockList.add('acme', 'gone@example.com', 1);
        throw new Error('changed my mind');
      }, options),
    ).rejects.toThrow('changed my mind');
    expect(await t.store.blockList.list('acme')).toEqual([]);
    // The connection went back to the pool usable: the next transaction commits.
    await t.store.transaction(async (tx) => {
      await tx.blockList.add('acme', 'next@example.com', 1);
    }, options);
    expect(await t.store.blockList.list('acme')).toEqual(['next@example.com']);
  });

  it.skipIf(skip)('a failing statement aborts the transaction; its earlier writes roll back', async () => {
    await expect(
      t.store.transaction(
        async (tx) => {
          await tx.blockList.add('acme', 'first@example.com', 1);
          // An organization that does not exist breaks the foreign key.
          await tx.blockList.add('no-such-org', 'x@example.com', 1);
        },
        { durable: false },
      ),
    ).rejects.toThrow();
    expect(await t.store.blockList.list('acme')).toEqual([]);
  });
});

describe.skipIf(!pgUp)('withoutFlush on PostgreSQL', () => {
  it('runs its statements with synchronous_commit off, and only them', async () => {
    const database = await freshDatabase('postgres');
    const opened = await openDatabase(database.url);
    const setting = async (db: Kysely<Database>) =>
      (await sql<{ s: string }>`select current_setting('synchronous_commit') as s`.execute(db)).rows[0]?.s;
    try {
      const before = await setting(opened.db);
      const inside = await withoutFlush(opened.db, (conn) => setting(conn));
      expect({ before, inside, after: await setting(opened.db) }).toEqual({ before: 'on', inside: 'off', after: 'on' });
    } finally {
      await opened.db.destroy();
      await database.drop();
    }
  });
});
