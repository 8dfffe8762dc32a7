import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import type { Clock } from '../../src/domain/clock.js';
import { migrate, openDatabase, type Dialect } from '../../src/storage/dialect.js';
import { storeOver, type Store } from '../../src/storage/store.js';
import { rememberDatabase } from './db.js';
import type { StoreTemplates } from './store-templates.js';

export const PG_URL = process.env.MAILROOM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let pgReachable: Promise<boolean> | undefined;

/**
 * Whether PostgreSQL answers. On a user's machine without it the PostgreSQL half of the suite
 * is skipped with a visible notice; under CI (CI=true) its absence is a failure, never a skip.
 */
export function postgresAvailable(): Promise<boolean> {
  pgReachable ??= (async () => {
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch (err) {
      if (process.env.CI === 'true') throw new Error(`PostgreSQL is required under CI: ${String(err)}`);
      console.warn(`\n*** PostgreSQL unreachable at ${PG_URL}: its half of the suite is SKIPPED ***\n`);
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return pgReachable;
}

export const DIALECTS: readonly Dialect[] = ['sqlite', 'postgres'];

export interface TestDatabase {
  url: string;
  dialect: Dialect;
  /** Drops the schema or deletes the file. */
  drop(): Promise<void>;
}

/** A fresh, empty database of the dialect: a SQLite file in a temp dir or a PostgreSQL schema. */
export async function freshDatabase(dialect: Dialect): Promise<TestDatabase> {
  const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-test-'));
    return {
      url: `sqlite:${path.join(dir, 'test.db')}`,
      dialect,
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `t_${tag}`;
  return {
    url: `${PG_URL}?schema=${schema}`,
    dialect,
    drop: async () => {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * A fresh database with every migration applied, copied from the run's template when
 * test/support/store-templates.ts made one (a SQLite file copy, or the recorded migration
 * replayed into the new schema in one round trip), else empty and left for the opener to
 * migrate. Tests of migrations themselves use freshDatabase.
 */
export async function migratedDatabase(dialect: Dialect): Promise<TestDatabase> {
  const database = await freshDatabase(dialect);
  const templates = providedTemplates();
  if (dialect === 'sqlite' && templates.sqliteFile !== undefined) {
    fs.copyFileSync(templates.sqliteFile, database.url.slice('sqlite:'.length));
  }
  if (dialect === 'postgres' && templates.postgresScript !== undefined) {
    const schema = new URL(database.url).searchParams.get('schema') ?? '';
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA "${schema}"; SET search_path TO "${schema}";\n${templates.postgresScript}`);
    } finally {
      await client.end();
    }
  }
  return database;
}

/** What the run's globalSetup provided; nothing when this file runs under another config. */
function providedTemplates(): StoreTemplates {
  try {
    return inject('storeTemplates') ?? {};
  } catch {
    return {};
  }
}

export interface TestStore {
  store: Store;
  clock: ManualClock;
  database: TestDatabase;
  cleanup(): Promise<void>;
}

/**
 * Opens a store as `openStore` does (migrating first), keeping the database handle for the
 * helpers of test/support/db.ts: the Store itself hands out no raw database.
 */
export async function openTestStore(url: string, clock: Clock): Promise<Store> {
  const opened = await openDatabase(url);
  try {
    await migrate(opened);
  } catch (err) {
    await opened.file?.close();
    await opened.db.destroy();
    throw err;
  }
  const store = storeOver(opened.db, opened.dialect, clock, opened.file, opened.health);
  rememberDatabase(store, opened.db);
  return store;
}

/** A store over migratedDatabase; openTestStore's migrate finds nothing left to do when templated. */
export async function freshStore(dialect: Dialect): Promise<TestStore> {
  const database = await migratedDatabase(dialect);
  const clock = new ManualClock();
  const store = await openTestStore(database.url, clock);
  return {
    store,
    clock,
    database,
    cleanup: async () => {
      await store.close();
      await database.drop();
    },
  };
}
