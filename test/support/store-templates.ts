import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate, openDatabase } from '../../src/storage/dialect.js';
import { StorageHealth } from '../../src/storage/health.js';
import type { Database } from '../../src/storage/schema.js';

/**
 * vitest's globalSetup (vitest.config.ts): migrates once per run, so that a test's fresh store
 * starts from a copy instead of migrating (test/support/stores.ts, migratedDatabase).
 *
 * - SQLite: a migrated file, copied per store: 1.5–1.9 ms instead of 10 ms on a quiet machine and
 *   32–65 ms on a loaded one (medians of 20).
 * - PostgreSQL: the statements `migrate` sent, recorded and replayed into each new schema in one
 *   round trip: 72 instead of 93 ms (median of 20); under load, from 26% less to 3% more. Both
 *   are mostly the server creating ~80 tables and indexes, which no template avoids.
 *   test/storage and test/http together: 146 and 153 s against 176 and 200 s migrating
 *   (interleaved runs on a loaded machine).
 *   `CREATE DATABASE … TEMPLATE` was measured and not taken: its create was the cheapest, but on
 *   PostgreSQL 15 every DROP DATABASE forces a checkpoint of the whole shared cluster
 *   (pg_stat_bgwriter.checkpoints_req +1 per drop; 0.7–1.2 s a drop while other suites ran), and
 *   each copy wrote ~4.5 MiB of WAL against ~0.7 MiB for migrating a schema.
 *
 * Rebuilt every run rather than keyed by a hash of the migrations: building both took 0.66 s
 * (median of 7, loaded machine), and a template can then never be stale. MAILROOM_TEST_TEMPLATE=off turns it
 * off (every store migrates from empty, as before), for A/B timing or to rule the template out.
 */
export interface StoreTemplates {
  /** A migrated SQLite file, checkpointed and closed: no -wal or -shm beside it. */
  sqliteFile?: string;
  /** What `migrate` sent to an empty PostgreSQL schema, as one script run with search_path set to the new schema. */
  postgresScript?: string;
}

declare module 'vitest' {
  interface ProvidedContext {
    storeTemplates: StoreTemplates;
  }
}

const PG_URL = process.env.MAILROOM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export default async function setup(project: TestProject): Promise<() => void> {
  if (process.env.MAILROOM_TEST_TEMPLATE === 'off') {
    project.provide('storeTemplates', {});
    return () => undefined;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-template-'));
  const sqliteFile = await sqliteTemplate(path.join(dir, 'template.db'));
  const postgresScript = await recordPostgresMigrations().catch((err: unknown) => {
    // Unreachable PostgreSQL is reported (or failed, under CI) by the tests themselves.
    console.warn(`PostgreSQL stores are not templated this run (each migrates from empty): ${String(err)}`);
    return undefined;
  });
  project.provide('storeTemplates', { sqliteFile, ...(postgresScript === undefined ? {} : { postgresScript }) });
  return () => fs.rmSync(dir, { recursive: true, force: true });
}

async function sqliteTemplate(file: string): Promise<string> {
  const opened = await openDatabase(`sqlite:${file}`);
  try {
    await migrate(opened);
    // Everything into the main file, so that copying it alone copies the database.
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(opened.db);
  } finally {
    await opened.file?.close();
    await opened.db.destroy();
  }
  const leftovers = ['-wal', '-shm'].filter((suffix) => fs.existsSync(file + suffix));
  if (leftovers.length > 0) throw new Error(`SQLite template ${file} left ${leftovers.join(', ')} behind after closing`);
  return file;
}

/**
 * Runs `migrate` against a scratch schema through a Kysely that logs every statement, then
 * drops the schema. Migrations name tables unqualified, so the statements replay into any
 * schema the search_path points at. Left out: what `migrate` sends around the steps (its
 * advisory lock, lifting the statement timeout, each step's begin and commit): the replay is
 * one implicit transaction on a connection of its own.
 */
export async function recordPostgresMigrations(): Promise<string> {
  const schema = `t_template_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
    const recorded: CompiledQuery[] = [];
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1, options: `-c search_path=${schema}` });
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        if (event.level === 'query') recorded.push(event.query);
      },
    });
    try {
      await migrate({ db, dialect: 'postgres', health: new StorageHealth() });
    } finally {
      await db.destroy();
    }
    return recorded
      .filter((q) => !AROUND_STEPS.test(q.sql))
      .map(inlined)
      .join(';\n');
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

const AROUND_STEPS = /^\s*(begin|commit|rollback|set statement_timeout|reset statement_timeout|select pg_advisory_(un)?lock)\b/i;

/** The statement with its $n parameters written in as literals (the replay is one simple query). */
function inlined(query: CompiledQuery): string {
  if (query.parameters.length === 0) return query.sql;
  return query.sql.replace(/\$(\d+)/g, (_, n: string) => literal(query.parameters[Number(n) - 1]));
}

function literal(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value === null) return 'null';
  // standard_conforming_strings is on (the default since 9.1): only the quote needs doubling.
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`;
  throw new Error(`A migration bound a ${typeof value} parameter, which the recorded template cannot write as a literal`);
}
