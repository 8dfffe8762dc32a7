import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messagesRepo } from '../../src/storage/messages.js';
import { overviewRepo } from '../../src/storage/overview.js';
import {
  type ExplainingSqlite,
  explainingSqlite,
  migratedDatabase,
  type PostgresPlanner,
  postgresPlanner,
} from '../support/query-plans.js';
import { postgresAvailable, type TestDatabase } from '../support/stores.js';

/**
 * Migration 0018: the `retrying` list filter and the overview's retrying count and oldest walk
 * messages_org_retrying, which holds only queued/sending rows with a last_error. A partial index
 * serves only statements whose text implies its predicate, so the plans are read from each
 * database: a statement that stopped implying it would read every message of the organization.
 */
describe('messages_org_retrying on SQLite (migration 0018)', () => {
  let database: TestDatabase;
  let sqlite: ExplainingSqlite;

  beforeAll(async () => {
    database = await migratedDatabase('sqlite');
    sqlite = explainingSqlite(database);
  });
  afterAll(async () => {
    sqlite.close();
    await database.drop();
  });

  it('a status=retrying page walks the partial index in time order, with no sort', async () => {
    const plan = await sqlite.planOf(() =>
      messagesRepo(sqlite.db, 'sqlite').history('acme', { statuses: ['retrying'], from: 1, to: 2 }, 26),
    );
    expect(plan).toMatch(/^SEARCH messages USING INDEX messages_org_retrying \(org_id=\? AND created_at>\? AND created_at<\?\)$/);
  });

  it("the overview's count and oldest walk it, with no sort", async () => {
    const plans = await sqlite.plansOf(() => overviewRepo(sqlite.db).retrying('acme', 'live'));
    expect(plans).toHaveLength(2);
    for (const plan of plans) expect(plan).toMatch(/SEARCH messages USING INDEX messages_org_retrying \(org_id=\?\)/);
    expect(plans.join(' ')).not.toMatch(/TEMP B-TREE/);
  });

  it('the statistics describe it', () => {
    const row = sqlite.raw.prepare("select stat from sqlite_stat1 where idx = 'messages_org_retrying'").get() as { stat: string };
    expect(row.stat).toBe('1000 10 1 1');
  });
});

const pgUp = await postgresAvailable();

describe.skipIf(!pgUp)('messages_org_retrying on PostgreSQL (migration 0018)', () => {
  let database: TestDatabase;
  let pg: PostgresPlanner;

  beforeAll(async () => {
    database = await migratedDatabase('postgres');
    pg = await postgresPlanner(database);
  });
  afterAll(async () => {
    await pg.close();
    await database.drop();
  });

  it('the retrying page and the overview reads use messages_org_retrying', async () => {
    pg.ran.length = 0;
    await messagesRepo(pg.db, 'postgres').history('acme', { statuses: ['retrying'], from: 1, to: 2 }, 26);
    await overviewRepo(pg.db).retrying('acme', 'live');
    expect(pg.ran).toHaveLength(3);
    for (const q of pg.ran) expect(await pg.planOf(q.sql, q.parameters), q.sql).toMatch(/using messages_org_retrying/);
  });
});
