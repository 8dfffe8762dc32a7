import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, openDatabase, type OpenedDatabase } from '../../src/storage/dialect.js';
import { postgresUrlOptions } from '../../src/storage/pg-options.js';
import { BOUNDED_SESSION, namingPool, UNBOUNDED_SESSION } from '../../src/storage/prepared-pool.js';
import { PG_URL, postgresAvailable } from '../support/stores.js';

const pgUp = await postgresAvailable();
const URL_BASE = 'postgres://u@db.example:5432/mail';

/** The URL's own parameters (src/storage/pg-options.ts): what the pool sends in its startup packet. */
describe('postgresUrlOptions', () => {
  it("by default bounds a statement at 15 s on the server, and strips mailroom's parameters", () => {
    expect(postgresUrlOptions(`${URL_BASE}?sslmode=require`)).toEqual({
      connectionString: `${URL_BASE}?sslmode=require`,
      schema: undefined,
      prepare: true,
      statementTimeoutMs: 15_000,
      options: '-c statement_timeout=15000',
    });
  });

  it('behind a pooler (prepare=off) sends no startup options at all, which PgBouncer would refuse', () => {
    const o = postgresUrlOptions(`${URL_BASE}?prepare=off`);
    expect(o).toMatchObject({ connectionString: URL_BASE, prepare: false, statementTimeoutMs: undefined, options: undefined });
  });

  it('takes an explicit statement_timeout, or off, either way round with prepare', () => {
    expect(postgresUrlOptions(`${URL_BASE}?prepare=off&statement_timeout=30000`)).toMatchObject({
      statementTimeoutMs: 30_000,
      options: '-c statement_timeout=30000',
    });
    expect(postgresUrlOptions(`${URL_BASE}?statement_timeout=off`)).toMatchObject({
      statementTimeoutMs: undefined,
      options: undefined,
      connectionString: URL_BASE,
    });
    expect(postgresUrlOptions(`${URL_BASE}?statement_timeout=off&schema=t_1`)).toMatchObject({
      schema: 't_1',
      options: '-c search_path=t_1',
    });
    expect(postgresUrlOptions(`${URL_BASE}?schema=t_1`).options).toBe('-c statement_timeout=15000 -c search_path=t_1');
  });

  it('refuses a statement_timeout that is not a whole number of ms or off, naming it', () => {
    for (const bad of ['0', '-5', '15s', '1.5', '', 'none']) {
      expect(() => postgresUrlOptions(`${URL_BASE}?statement_timeout=${bad}`)).toThrow(
        `statement_timeout must be a whole number of milliseconds (1 or more) or off, not "${bad}"`,
      );
    }
    expect(() => postgresUrlOptions(`${URL_BASE}?prepare=maybe`)).toThrow('prepare must be on or off');
  });
});

describe.skipIf(!pgUp)('statement_timeout on a real PostgreSQL connection', () => {
  let opened: OpenedDatabase | undefined;
  afterEach(async () => {
    await opened?.db.destroy();
    opened = undefined;
  });
  const withParam = (param: string) => `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}${param}`;
  const shown = async (db: Kysely<never>) =>
    (await sql<{ statement_timeout: string }>`show statement_timeout`.execute(db)).rows[0]?.statement_timeout;

  it('is 15s by default and 0 with statement_timeout=off', async () => {
    opened = await openDatabase(PG_URL);
    expect(await shown(opened.db as unknown as Kysely<never>)).toBe('15s');
    await opened.db.destroy();
    opened = await openDatabase(withParam('statement_timeout=off'));
    expect(await shown(opened.db as unknown as Kysely<never>)).toBe('0');
    await opened.db.destroy();
    opened = await openDatabase(withParam('prepare=off'));
    expect(await shown(opened.db as unknown as Kysely<never>)).toBe('0');
  });

  it("off, the migrations' session SET and RESET are not sent (a pooler would leave them on a shared connection)", async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1, options: '-c statement_timeout=7000' });
    const db = new Kysely<never>({
      dialect: new PostgresDialect({ pool: namingPool(pool, undefined, { statementTimeout: false }) }),
    });
    try {
      await db.connection().execute(async (conn) => {
        await sql.raw(UNBOUNDED_SESSION).execute(conn);
        // Had it been sent, this session would now show 0.
        expect(await shown(conn)).toBe('7s');
        await sql.raw(BOUNDED_SESSION).execute(conn);
      });
    } finally {
      await db.destroy();
    }
  });

  it('migrate runs with it off', async () => {
    const schema = `t_stoff_${Date.now().toString(36)}`;
    opened = await openDatabase(withParam(`statement_timeout=off&schema=${schema}`));
    try {
      await migrate(opened);
      expect(await shown(opened.db as unknown as Kysely<never>)).toBe('0');
    } finally {
      await sql.raw(`drop schema "${schema}" cascade`).execute(opened.db);
    }
  });
});
