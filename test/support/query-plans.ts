import Sqlite from 'better-sqlite3';
import { type CompiledQuery, Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { migrate, openDatabase } from '../../src/storage/dialect.js';
import type { Database } from '../../src/storage/schema.js';
import { freshDatabase, PG_URL, type TestDatabase } from './stores.js';

/**
 * Query plans read from the databases themselves, for the tests that pin which index a statement
 * walks (planner statistics, partial indexes). A partial index serves only statements whose text
 * implies its predicate, so a reader that stopped implying it would scan the whole table, silently:
 * only the plan shows it.
 */

/** A fresh database with every migration applied, closed again (the tests open it their own way). */
export async function migratedDatabase(dialect: 'sqlite' | 'postgres'): Promise<TestDatabase> {
  const database = await freshDatabase(dialect);
  const opened = await openDatabase(database.url);
  await migrate(opened);
  await opened.file?.close();
  await opened.db.destroy();
  return database;
}

export interface ExplainingSqlite {
  /** Kysely over the file; every matching statement it prepares is explained first. */
  db: Kysely<Database>;
  /** The file itself, for sqlite_master and sqlite_stat1. */
  raw: Sqlite.Database;
  /** The plans of what `run` prepared, joined with ` || ` (each plan's rows joined with ` | `). */
  planOf(run: () => Promise<unknown>): Promise<string>;
  /** The plans of what `run` prepared, one string each. */
  plansOf(run: () => Promise<unknown>): Promise<string[]>;
  close(): void;
}

/** Statements whose plans are taken: reads by default; pass a pattern to include writes. */
export function explainingSqlite(database: TestDatabase, statements: RegExp = /^select/): ExplainingSqlite {
  const raw = new Sqlite(database.url.slice('sqlite:'.length));
  let plans: string[] = [];
  const explaining = {
    close: () => raw.close(),
    prepare: (text: string) => {
      if (statements.test(text.trimStart())) {
        const params = (text.match(/\?/g) ?? []).map(() => 1);
        const rows = raw.prepare(`explain query plan ${text}`).all(...params) as Array<{ detail: string }>;
        plans.push(rows.map((r) => r.detail).join(' | '));
      }
      return raw.prepare(text);
    },
  };
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: explaining }) });
  const plansOf = async (run: () => Promise<unknown>) => {
    plans = [];
    await run();
    return plans;
  };
  return {
    db,
    raw,
    plansOf,
    planOf: async (run) => (await plansOf(run)).join(' || '),
    close: () => raw.close(),
  };
}

export interface PostgresPlanner {
  /** A client on the database's schema, for catalog reads. */
  client: pg.Client;
  /** Kysely on the schema, recording each statement it runs in `ran`. */
  db: Kysely<Database>;
  ran: CompiledQuery[];
  /**
   * EXPLAIN with sequential scans priced out, so the plan shows whether PostgreSQL can prove the
   * statement's WHERE implies an index's (on an empty table it would rightly scan).
   */
  planOf(text: string, params?: readonly unknown[]): Promise<string>;
  close(): Promise<void>;
}

export async function postgresPlanner(database: TestDatabase): Promise<PostgresPlanner> {
  const schema = new URL(database.url).searchParams.get('schema') ?? '';
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`set search_path to "${schema}"`);
  const ran: CompiledQuery[] = [];
  const pool = new pg.Pool({ connectionString: PG_URL, max: 1, options: `-c search_path="${schema}"` });
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (e) => {
      if (e.level === 'query') ran.push(e.query);
    },
  });
  return {
    client,
    db,
    ran,
    planOf: async (text, params = []) => {
      await client.query('begin');
      try {
        await client.query('set local enable_seqscan = off');
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain ${text}`, [...params]);
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      } finally {
        await client.query('rollback');
      }
    },
    close: async () => {
      await db.destroy();
      await client.end();
    },
  };
}
