import { afterEach, beforeEach, describe } from 'vitest';
import type { ManualClock } from '../../src/domain/clock.js';
import type { Dialect } from '../../src/storage/dialect.js';
import type { Store } from '../../src/storage/store.js';
import { DIALECTS, freshStore, postgresAvailable, type TestDatabase, type TestStore } from './stores.js';

/**
 * The two-database preamble: the same tests on SQLite and PostgreSQL. PostgreSQL is asked once
 * when a test file loads; where it does not answer (a user's machine) its half is skipped with
 * the notice postgresAvailable prints, and under CI its absence fails the file instead.
 */
const pgUp = await postgresAvailable();

/** Whether the tests of `dialect` are skipped here: PostgreSQL that does not answer. */
export const dialectSkipped = (dialect: Dialect): boolean => dialect === 'postgres' && !pgUp;

/**
 * `describe.each(DIALECTS)`: the block once per dialect (`%s` in the title names it), given the
 * dialect and whether its tests skip (`it.skipIf(skip)`).
 */
export function describeDialects(title: string, body: (dialect: Dialect, skip: boolean) => void): void {
  describe.each(DIALECTS)(title, (dialect) => body(dialect, dialectSkipped(dialect)));
}

/** The current test's store, its clock and database (reading one outside a test, or when skipped, throws). */
export interface StoreOfTest {
  readonly store: Store;
  readonly clock: ManualClock;
  readonly database: TestDatabase;
}

/**
 * A fresh store of the dialect for every test of the enclosing block, closed after it; `before`
 * runs on it first (seeding, say). Nothing is opened when `skip`.
 */
export function freshStoreEach(dialect: Dialect, skip: boolean, before?: (t: TestStore) => Promise<unknown>): StoreOfTest {
  let current: TestStore | undefined;
  const opened = (): TestStore => {
    if (current === undefined) throw new Error('freshStoreEach: no store outside a test (or the dialect is skipped)');
    return current;
  };
  beforeEach(async () => {
    if (skip) return;
    current = await freshStore(dialect);
    await before?.(current);
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
  return {
    get store() {
      return opened().store;
    },
    get clock() {
      return opened().clock;
    },
    get database() {
      return opened().database;
    },
  };
}
