import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type SqliteDatabase as SqliteDatabaseLike } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { MIGRATIONS } from './migrations/index.js';
import { fromDatabase } from '../errors/storage-trouble.js';
import { StorageHealth } from './health.js';
import { DEFAULT_STATEMENT_TIMEOUT_MS, postgresUrlOptions } from './pg-options.js';
import { BOUNDED_SESSION, HOT_AFTER, namingPool, UNBOUNDED_SESSION } from './prepared-pool.js';
import { BACKSTOP_CHECKPOINT_PAGES, WAL_KEPT_BYTES, WalKeeper, type CommitFollowUp } from './wal-keeper.js';

export type Dialect = 'sqlite' | 'postgres';

export interface OpenedDatabase {
  db: Kysely<Database>;
  dialect: Dialect;
  /** This process's view of the storage's health (src/storage/health.ts); the pool reports into it. */
  health: StorageHealth;
  /** SQLite file databases: flushes and checkpoints the WAL off the event loop (WalKeeper). */
  file?: CommitFollowUp;
}

/**
 * Opens `sqlite:PATH` (or `sqlite::memory:`) or `postgres://…`. A `schema` query parameter on a
 * PostgreSQL URL puts every table in that schema (created if missing): tests use one schema each.
 * `warn` hears of trouble the database copes with on its own (see WalKeeperOptions).
 */
export async function openDatabase(url: string, warn?: (message: string) => void): Promise<OpenedDatabase> {
  const health = new StorageHealth();
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    return {
      db: openSqlite(file),
      dialect: 'sqlite',
      health,
      ...(file === ':memory:' ? {} : { file: new WalKeeper(file, { warn }) }),
    };
  }
  return { db: await openPostgres(url, health), dialect: 'postgres', health };
}

function openSqlite(file: string): Kysely<Database> {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SqliteDatabase(file);
  // WAL lets readers run beside the writer; synchronous=FULL makes a 202 survive power loss,
  // not only kill -9 (README, Performance: with group commit, one durable insert per request
  // still keeps ~0.46x of a bare route's rate).
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  // Group commit gives each send its own SAVEPOINT; their rollback journals are temp files
  // unless kept in memory, which halved the SQL cost of a send (~130 → ~75 µs, 20,000 sends
  // in batches of 16). They hold at most one transaction's changed pages.
  sqlite.pragma('temp_store = MEMORY');
  sqlite.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
  // When the WAL starts over by itself, its file is cut back to this (see WalKeeper).
  sqlite.pragma(`journal_size_limit = ${WAL_KEPT_BYTES}`);
  // Another process (mailroom worker beside mailroom serve) may hold the write lock briefly.
  sqlite.pragma('busy_timeout = 5000');
  // SQLite's lower() and LIKE fold ASCII only; the message search folds every letter, as
  // PostgreSQL's lower() does under a UTF-8 locale (src/storage/history.ts, containsFolded).
  sqlite.function('mailroom_fold', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v));
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: cachingStatements(sqlite) }) });
}

/**
 * Kysely prepares every query anew; preparing cost about as much as running the query on the
 * send path (~1 s of a 4 s profile). Statements are reusable, and the query builder produces a
 * small, fixed set of SQL texts (values are bound parameters), so a plain map suffices; the
 * cap only guards against a caller that builds SQL with inlined values.
 */
function cachingStatements(sqlite: SqliteDatabase.Database): SqliteDatabaseLike {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => sqlite.close(),
    prepare: (text: string) => {
      let stmt = cache.get(text);
      if (stmt === undefined) {
        stmt = sqlite.prepare(text);
        if (cache.size >= 2000) cache.clear();
        cache.set(text, stmt);
      }
      return stmt;
    },
  };
}

// BIGINT (int8, oid 20) comes back from pg as a string by default; our BIGINTs are
// millisecond times and credit counts, far below 2^53, so numbers are exact.
const INT8_OID = 20;
const pgTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

async function openPostgres(url: string, health: StorageHealth): Promise<Kysely<Database>> {
  // schema, prepare and statement_timeout: mailroom's own URL parameters (pg-options.ts).
  const { connectionString, schema, prepare, statementTimeoutMs, options } = postgresUrlOptions(url);
  if (schema !== undefined) {
    const client = new pg.Client({ connectionString, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    // A connection lost while it is open is reported by the query under way; without a
    // listener its 'error' event would also end the process.
    client.on('error', () => undefined);
    await client.connect().catch((err: unknown) => {
      throw fromDatabase(err);
    });
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    } catch (err) {
      // Two processes creating the schema at once: the loser sees a unique violation (23505).
      if ((err as { code?: string }).code !== '23505') throw fromDatabase(err);
    } finally {
      await client.end();
    }
  }
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    types: pgTypes,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // Notices a peer that vanished without a word (a failover's old primary) on idle connections.
    keepAlive: true,
    ...(options === undefined ? {} : { options }),
  });
  // PostgreSQL going away (a restart's 57P01, a crash, a failover) makes every connection emit
  // 'error': pg-pool listens only while a client is idle, and an 'error' event nobody hears ends
  // the process. An idle client's error reaches the pool; a checked-out client's reaches its
  // own listener, and the query under way rejects with it (handled by its caller, which reports
  // it). These listeners only keep the process alive: an idle connection closed by the server's
  // idle_session_timeout (57P05) or a load balancer cutting idle TCP is no outage, so it neither
  // changes the health nor logs. pg-pool drops the dead client; the next checkout connects anew.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const limits = prepare ? undefined : { hotAfter: HOT_AFTER, maxNamed: 0, maxCounted: 0 };
  return new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: namingPool(pool, limits, {
        queryTimeoutMs: QUERY_TIMEOUT_MS,
        health,
        statementTimeout: statementTimeoutMs !== undefined,
      }),
    }),
  });
}

/**
 * Time bounds on PostgreSQL, so that a request never hangs on a database that went away:
 * - connecting, or waiting for one of the pool's 10 connections: 5 s. A restarted or stopped
 *   server refuses at once (ECONNREFUSED, 57P03); this bounds a host that does not answer at all.
 * - one statement: 15 s, on the server (statement_timeout; the connection stays usable). The
 *   slowest statements of a running service (housekeeping's purge of 500 messages, a history
 *   page) take well under a second; migrations lift it for their session (UNBOUNDED_SESSION).
 *   The URL's `statement_timeout=MS|off` sets it (pg-options.ts; off by default behind a pooler).
 * - one query, on our side: 20 s, for a server that stopped answering without closing the
 *   connection (statement_timeout cannot fire there); that connection is then dropped.
 */
export const CONNECT_TIMEOUT_MS = 5_000;
export const STATEMENT_TIMEOUT_MS = DEFAULT_STATEMENT_TIMEOUT_MS;
export const QUERY_TIMEOUT_MS = 20_000;

/**
 * Applies pending migrations, once, however many processes start together: the whole run
 * holds a lock on one connection (PostgreSQL a session advisory lock, SQLite the file's write
 * lock through BEGIN IMMEDIATE, where busy_timeout makes the other process wait). Our own
 * small runner rather than Kysely's Migrator, whose bootstrap lists tables across every
 * schema and trips over a neighbour schema being dropped at that moment.
 */
export async function migrate({ db, dialect }: OpenedDatabase): Promise<string[]> {
  return db.connection().execute(async (conn) => {
    if (dialect === 'postgres') {
      // Waiting for another process's migrations, or building an index on a large table, may
      // take longer than a statement of a running service is allowed (STATEMENT_TIMEOUT_MS).
      await sql.raw(UNBOUNDED_SESSION).execute(conn);
      await sql`select pg_advisory_lock(${MIGRATION_LOCK_ID})`.execute(conn);
      try {
        return await applyPending(conn, dialect, (step) => conn.transaction().execute(step));
      } finally {
        await sql`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`.execute(conn);
        await sql.raw(BOUNDED_SESSION).execute(conn);
      }
    }
    await sql`begin immediate`.execute(conn);
    try {
      const applied = await applyPending(conn, dialect, (step) => step(conn));
      await sql`commit`.execute(conn);
      return applied;
    } catch (err) {
      await sql`rollback`.execute(conn);
      throw err;
    }
  });
}

/** Arbitrary constant naming mailroom's migration lock among other advisory locks. */
const MIGRATION_LOCK_ID = 4_242_001;

type Step = (db: Kysely<Database>) => Promise<void>;

async function applyPending(
  conn: Kysely<Database>,
  dialect: Dialect,
  inTransaction: (step: Step) => Promise<void>,
): Promise<string[]> {
  await sql`create table if not exists mailroom_migrations (name text primary key, applied_at bigint not null)`.execute(conn);
  const done = new Set((await sql<{ name: string }>`select name from mailroom_migrations`.execute(conn)).rows.map((r) => r.name));
  const applied: string[] = [];
  for (const [name, up] of Object.entries(MIGRATIONS).sort(([a], [b]) => a.localeCompare(b))) {
    if (done.has(name)) continue;
    // Each step and its bookkeeping row commit together (PostgreSQL has transactional DDL;
    // on SQLite the whole run is one IMMEDIATE transaction).
    await inTransaction(async (tx) => {
      await up(tx as unknown as Kysely<unknown>, dialect);
      await sql`insert into mailroom_migrations (name, applied_at) values (${name}, ${Date.now()})`.execute(tx);
    });
    applied.push(name);
  }
  return applied;
}
