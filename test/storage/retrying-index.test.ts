import Sqlite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../src/storage/dialect.js';
import { messagesRepo } from '../../src/storage/messages.js';
import { overviewRepo } from '../../src/storage/overview.js';
import type { Database } from '../../src/storage/schema.js';
import { freshDatabase, PG_URL, postgresAvailable, type TestDatabase } from '../support/stores.js';

/**
 * Migration 0018: the `retrying` list filter and the overview's retrying count and oldest walk
 * messages_org_retrying, which holds only queued/sending rows with a last_error. A partial index
 * serves only statements whose text implies its predicate, so the plans are read from each
 * database: a statement that stopped implying it would read every message of the organization.
 */
async function migrated(dialect: 'sqlite' | 'postgres'): Promise<TestDatabase> {
  const database = await freshDatabase(dialect);
  const opened = await openDatabase(database.url);
  await migrate(opened);
  await opened.file?.close();
  await opened.db.destroy();
  return database;
}

describe('messages_org_retrying on SQLite (migration 0018)', () => {
  let database: TestDatabase;
  let raw: Sqlite.Database;
  let plans: string[];
  let db: Kysely<Database>;

  beforeAll(async () => {
    database = await migrated('sqlite');
    raw = new Sqlite(database.url.slice('sqlite:'.length));
    plans = [];
    const explaining = {
      close: () => raw.close(),
      prepare: (text: string) => {
        if (text.trimStart().startsWith('select')) {
          const params = (text.match(/\?/g) ?? []).map(() => 1);
          const rows = raw.prepare(`explain query plan ${text}`).all(...params) as Array<{ detail: string }>;
          plans.push(rows.map((r) => r.detail).join(' | '));
        }
        return raw.prepare(text);
      },
    };
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: explaining }) });
  });
  afterAll(async () => {
    raw.close();
    await database.drop();
  });

  it('a status=retrying page walks the partial index in time order, with no sort', async () => {
    plans = [];
    await messagesRepo(db, 'sqlite').history('acme', { statuses: ['retrying'], from: 1, to: 2 }, 26);
    expect(plans.join(' || ')).toMatch(
      /^SEARCH messages USING INDEX messages_org_retrying \(org_id=\? AND created_at>\? AND created_at<\?\)$/,
    );
  });

  it("the overview's count and oldest walk it, with no sort", async () => {
    plans = [];
    await overviewRepo(db).retrying('acme', 'live');
    expect(plans).toHaveLength(2);
    for (const plan of plans) expect(plan).toMatch(/SEARCH messages USING INDEX messages_org_retrying \(org_id=\?\)/);
    expect(plans.join(' ')).not.toMatch(/TEMP B-TREE/);
  });

  it('the statistics describe it', () => {
    const row = raw.prepare("select stat from sqlite_stat1 where idx = 'messages_org_retrying'").get() as { stat: string };
    expect(row.stat).toBe('1000 10 1 1');
  });
});

const pgUp = await postgresAvailable();

describe.skipIf(!pgUp)('messages_org_retrying on PostgreSQL (migration 0018)', () => {
  let database: TestDatabase;
  let client: pg.Client;
  let db: Kysely<Database>;
  const ran: CompiledQuery[] = [];

  beforeAll(async () => {
    database = await migrated('postgres');
    const schema = new URL(database.url).searchParams.get('schema') ?? '';
    client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`set search_path to "${schema}"`);
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1, options: `-c search_path="${schema}"` });
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool }),
      log: (e) => {
        if (e.level === 'query') ran.push(e.query);
      },
    });
  });
  afterAll(async () => {
    await db.destroy();
    await client.end();
    await database.drop();
  });

  // With sequential scans priced out, the plan shows whether PostgreSQL can prove the statement's
  // WHERE implies the index's (on an empty table it would rightly scan).
  const planOf = async (q: CompiledQuery): Promise<string> => {
    await client.query('begin');
    try {
      await client.query('set local enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain ${q.sql}`, [...q.parameters]);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      await client.query('rollback');
    }
  };

  it('the retrying page and the overview reads use messages_org_retrying', async () => {
    ran.length = 0;
    await messagesRepo(db, 'postgres').history('acme', { statuses: ['retrying'], from: 1, to: 2 }, 26);
    await overviewRepo(db).retrying('acme', 'live');
    expect(ran).toHaveLength(3);
    for (const q of ran) expect(await planOf(q), q.sql).toMatch(/using messages_org_retrying/);
  });
});
