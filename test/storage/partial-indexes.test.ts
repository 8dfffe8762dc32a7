import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messagesRepo } from '../../src/storage/messages.js';
import { overviewRepo } from '../../src/storage/overview.js';
import { providerEventsRepo } from '../../src/storage/provider-events.js';
import { queueRepo } from '../../src/storage/queue.js';
import {
  type ExplainingSqlite,
  explainingSqlite,
  migratedDatabase,
  type PostgresPlanner,
  postgresPlanner,
} from '../support/query-plans.js';
import { postgresAvailable, type TestDatabase } from '../support/stores.js';

/**
 * Migration 0012 narrows messages_due, messages_leased and messages_provider_message_id to the
 * rows their readers want. A partial index serves only statements whose text implies its
 * predicate, so each reader's plan is read from the database itself: a statement that stopped
 * implying it would walk the whole table instead, silently, at 10 M rows.
 */
const PARTIAL = {
  messages_due: /where .*status.* = 'queued'/i,
  messages_leased: /where .*status.* = 'sending'/i,
  messages_provider_message_id: /where .*provider_message_id.* is not null/i,
};

describe('partial queue indexes on SQLite (migration 0012)', () => {
  let database: TestDatabase;
  let sqlite: ExplainingSqlite;
  let db: ExplainingSqlite['db'];
  let raw: ExplainingSqlite['raw'];
  let planOf: ExplainingSqlite['planOf'];

  beforeAll(async () => {
    database = await migratedDatabase('sqlite');
    // The claim and the reaper are updates: their plans count too.
    sqlite = explainingSqlite(database, /^(select|update|delete)/);
    ({ db, raw, planOf } = sqlite);
  });
  afterAll(async () => {
    sqlite.close();
    await database.drop();
  });

  it('the three indexes are partial, with the predicates their readers imply', () => {
    for (const [name, predicate] of Object.entries(PARTIAL)) {
      const row = raw.prepare('select sql from sqlite_master where name = ?').get(name) as { sql: string } | undefined;
      expect(row?.sql, name).toMatch(predicate);
    }
  });

  it('the claim walks messages_due', async () => {
    expect(await planOf(() => queueRepo(db, 'sqlite').claim(1_000, 10, 60_000))).toMatch(
      /SEARCH messages USING INDEX messages_due \(next_attempt_at<\?\)/,
    );
  });

  it('the reaper walks messages_leased', async () => {
    expect(await planOf(() => queueRepo(db, 'sqlite').reapExpired(1_000, () => undefined))).toMatch(
      /SEARCH messages USING INDEX messages_leased \(lease_until<\?\)/,
    );
  });

  it('the queue depth counts messages_due alone', async () => {
    expect(await planOf(() => queueRepo(db, 'sqlite').depth(1_000))).toMatch(/SCAN messages USING COVERING INDEX messages_due/);
  });

  it("a provider's event finds its message by messages_provider_message_id", async () => {
    expect(await planOf(() => providerEventsRepo(db, 'sqlite').findMessage({ orgId: 'acme', providerMessageId: 'p-1' }))).toMatch(
      /SEARCH messages USING INDEX messages_provider_message_id \(provider_message_id=\?\)/,
    );
  });

  // Test mode (migration 0015): test pages walk messages_test, which holds test messages only;
  // live pages walk what they walked before (planner-stats.test.ts), skipping test rows.
  it("a test history page, the overview's test counts and the test purge walk messages_test", async () => {
    const messages = messagesRepo(db, 'sqlite');
    expect(await planOf(() => messages.history('acme', { mode: 'test' }, 26))).toBe(
      'SEARCH messages USING INDEX messages_test (org_id=?)',
    );
    expect(await planOf(() => messages.history('acme', { mode: 'test', from: 1, to: 2 }, 26))).toBe(
      'SEARCH messages USING INDEX messages_test (org_id=? AND created_at>? AND created_at<?)',
    );
    expect(await planOf(() => overviewRepo(db).dailyCounts('acme', 1, 2, 'test'))).toMatch(
      /^SEARCH messages USING INDEX messages_test \(org_id=\? AND created_at>\? AND created_at<\?\)/,
    );
    expect(await planOf(() => messages.purgeOlderThan(1_000, 500, 'test'))).toMatch(/messages USING INDEX messages_test/);
  });

  it('statistics describe the indexes as they now are', () => {
    const rows = raw.prepare("select idx, stat from sqlite_stat1 where tbl = 'messages'").all() as Array<{
      idx: string;
      stat: string;
    }>;
    const stats = new Map(rows.map((r) => [r.idx, r.stat]));
    expect(stats.get('messages_due')).toBe('1000 1');
    expect(stats.get('messages_leased')).toBe('100 1');
    expect(stats.get('messages_org_status_time')).toBe('1000000 1000 330 1 1');
    expect(stats.get('messages_test')).toBe('1000 100 1 1');
  });
});

const pgUp = await postgresAvailable();

describe.skipIf(!pgUp)('partial queue indexes on PostgreSQL (migration 0012)', () => {
  let database: TestDatabase;
  let planner: PostgresPlanner;
  const planOf = (text: string, params: unknown[] = []) => planner.planOf(text, params);

  beforeAll(async () => {
    database = await migratedDatabase('postgres');
    planner = await postgresPlanner(database);
  });
  afterAll(async () => {
    await planner.close();
    await database.drop();
  });

  it('the three indexes are partial, with the predicates their readers imply', async () => {
    const { rows } = await planner.client.query<{ indexname: string; indexdef: string }>(
      'select indexname, indexdef from pg_indexes where schemaname = current_schema() and tablename = $1',
      ['messages'],
    );
    const defs = new Map(rows.map((r) => [r.indexname, r.indexdef]));
    for (const [name, predicate] of Object.entries(PARTIAL)) expect(defs.get(name), name).toMatch(predicate);
  });

  it("the claim's, the reaper's, the depth's and the provider lookup's statements use them", async () => {
    expect(
      await planOf(
        "select id from messages where status = 'queued' and next_attempt_at <= 1000 order by next_attempt_at limit 10",
      ),
    ).toMatch(/Index Scan using messages_due/);
    expect(await planOf("select id from messages where status = 'sending' and lease_until < $1 limit 500", [1000])).toMatch(
      /using messages_leased/,
    );
    expect(await planOf("select count(*) from messages where status = 'queued'")).toMatch(/using messages_due/);
    // A bound value implies NOT NULL (= is strict); the ORDER BY of the real lookup is left out, as
    // on an empty table the planner would rightly walk the time index instead.
    expect(await planOf('select id from messages where provider_message_id = $1 and org_id = $2', ['p-1', 'acme'])).toMatch(
      /using messages_provider_message_id/,
    );
  });

  it('a test history page uses messages_test', async () => {
    expect(
      await planOf("select id from messages where org_id = $1 and mode = 'test' order by created_at desc, id desc limit 26", [
        'acme',
      ]),
    ).toMatch(/using messages_test/);
  });
});
