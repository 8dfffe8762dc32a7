import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/dialect.js';
import { namingPool } from '../../src/storage/prepared-pool.js';
import { PG_URL, postgresAvailable } from '../support/stores.js';

/**
 * The pool that sends hot parameterized statements as named prepared statements
 * (src/storage/prepared-pool.ts), against real PostgreSQL: what gets a name is read back from
 * the backend's own pg_prepared_statements.
 */
const pgUp = await postgresAvailable();

describe.skipIf(!pgUp)('namingPool (PostgreSQL)', () => {
  let pool: pg.Pool;
  let db: Kysely<Record<string, never>>;

  const open = (limits = { hotAfter: 3, maxNamed: 4, maxCounted: 10 }) => {
    // One connection, so every statement lands on the backend the test then asks.
    pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    db = new Kysely({ dialect: new PostgresDialect({ pool: namingPool(pool, limits) }) });
  };
  const prepared = async (): Promise<string[]> =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements order by prepare_time`.execute(db)).rows.map(
      (r) => r.statement,
    );

  beforeEach(() => open());
  afterEach(async () => {
    await db.destroy();
  });

  it('names a parameterized statement from its third run, and keeps answering it right', async () => {
    const results: number[] = [];
    for (let i = 1; i <= 8; i++)
      results.push(Number((await sql<{ n: number }>`select ${i}::int * 2 as n`.execute(db)).rows[0]?.n));
    expect(results).toEqual([2, 4, 6, 8, 10, 12, 14, 16]);
    expect(await prepared()).toEqual(['select $1::int * 2 as n']);
  });

  it('never names a statement without parameters, so a multi-command string still runs', async () => {
    for (let i = 0; i < 5; i++) await sql`begin; set local synchronous_commit = off; commit`.execute(db);
    for (let i = 0; i < 5; i++) await sql`select 1`.execute(db);
    expect(await prepared()).toEqual([]);
  });

  it('names at most maxNamed texts; the rest run unnamed', async () => {
    for (let k = 0; k < 6; k++) {
      for (let i = 0; i < 3; i++) await sql`select ${i}::int + ${sql.lit(k)} as n`.execute(db);
    }
    expect(await prepared()).toHaveLength(4);
    expect(Number((await sql<{ n: number }>`select ${1}::int + 5 as n`.execute(db)).rows[0]?.n)).toBe(6);
  });

  it('never names a statement that selects or returns *, so a column another process adds cannot break it', async () => {
    const table = `t_star_${Date.now().toString(36)}`;
    await sql`create table ${sql.table(table)} (id int primary key, a text)`.execute(db);
    try {
      await sql`insert into ${sql.table(table)} values (1, 'x')`.execute(db);
      const star = () => sql<Record<string, unknown>>`select * from ${sql.table(table)} where id = ${1}`.execute(db);
      const named = () => sql<{ a: string }>`select a from ${sql.table(table)} where id = ${1}`.execute(db);
      for (let i = 0; i < 4; i++) {
        await star();
        await named();
      }
      expect(await prepared()).toEqual([`select a from "${table}" where id = $1`]);
      // A migration of a newer release, from its own connection.
      const other = new pg.Client({ connectionString: PG_URL });
      await other.connect();
      await other.query(`alter table ${table} add column b text`);
      await other.end();
      expect((await star()).rows[0]).toEqual({ id: 1, a: 'x', b: null });
      expect((await named()).rows[0]).toEqual({ a: 'x' });
    } finally {
      await sql`drop table ${sql.table(table)}`.execute(db);
    }
  });

  it('a statement that turns hot after the count of cold ones is full is still named', async () => {
    await db.destroy();
    open({ hotAfter: 3, maxNamed: 4, maxCounted: 2 });
    for (const k of [1, 2, 3]) await sql`select ${k}::int + ${sql.lit(k)} as cold`.execute(db);
    for (let i = 0; i < 3; i++) await sql`select ${i}::int as late`.execute(db);
    expect(await prepared()).toEqual(['select $1::int as late']);
  });

  it('a named statement that fails at run time fails alone; the next run of it succeeds', async () => {
    const divide = (d: number) => sql<{ q: number }>`select 10 / ${d}::int as q`.execute(db);
    for (let i = 0; i < 3; i++) await divide(5);
    await expect(divide(0)).rejects.toThrow(/division by zero/);
    expect(Number((await divide(2)).rows[0]?.q)).toBe(5);
  });

  it('a statement that does not parse keeps failing with its own error, and the connection keeps working', async () => {
    for (let i = 0; i < 4; i++) await expect(sql`select ${1}::int frm nowhere`.execute(db)).rejects.toThrow(/syntax error/);
    expect(Number((await sql<{ n: number }>`select ${7}::int as n`.execute(db)).rows[0]?.n)).toBe(7);
  });

  it('inside a transaction that aborts, then rolls back, the name is still usable', async () => {
    const pick = (v: number) => sql<{ v: number }>`select ${v}::int as v`;
    for (let i = 0; i < 3; i++) await pick(i).execute(db);
    await expect(
      db.transaction().execute(async (tx) => {
        await pick(1).execute(tx);
        await sql`select ${1}::int / 0`.execute(tx);
      }),
    ).rejects.toThrow(/division by zero/);
    expect(Number((await pick(9).execute(db)).rows[0]?.v)).toBe(9);
  });
});

describe.skipIf(!pgUp)('MAILROOM_DATABASE_URL prepare=on|off (PostgreSQL)', () => {
  const preparedAfterHotUse = async (query: string): Promise<number> => {
    const opened = await openDatabase(`${PG_URL}${query}`);
    try {
      return await opened.db.connection().execute(async (conn) => {
        for (let i = 0; i < 5; i++) await sql`select ${i}::int as n`.execute(conn);
        const rows = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(conn);
        return Number(rows.rows[0]?.n);
      });
    } finally {
      await opened.db.destroy();
    }
  };

  it('names hot statements by default, and none with prepare=off', async () => {
    expect(await preparedAfterHotUse('')).toBeGreaterThan(0);
    expect(await preparedAfterHotUse('?prepare=off')).toBe(0);
  });

  it('refuses any other value', async () => {
    await expect(openDatabase(`${PG_URL}?prepare=maybe`)).rejects.toThrow(/prepare must be on or off/);
  });
});
