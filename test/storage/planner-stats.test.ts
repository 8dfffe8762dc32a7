import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryFilter } from '../../src/storage/history.js';
import { messagesRepo } from '../../src/storage/messages.js';
import { type ExplainingSqlite, explainingSqlite, migratedDatabase } from '../support/query-plans.js';
import type { TestDatabase } from '../support/stores.js';

/**
 * Migration 0011 gives SQLite's planner statistics, so each history filter walks the index
 * that serves it (goal 3 of issue 16). The plans are read from SQLite itself: every statement
 * the messages repository prepares for a page is explained as it runs.
 */
describe('history query plans on SQLite (migration 0011_planner_stats)', () => {
  let database: TestDatabase;
  let sqlite: ExplainingSqlite;
  let raw: ExplainingSqlite['raw'];

  beforeAll(async () => {
    database = await migratedDatabase('sqlite');
    sqlite = explainingSqlite(database);
    raw = sqlite.raw;
  });
  afterAll(async () => {
    sqlite.close();
    await database.drop();
  });

  const planOf = (f: HistoryFilter): Promise<string> =>
    sqlite.planOf(() => messagesRepo(sqlite.db, 'sqlite').history('acme', f, 26));

  it('migration 0011 wrote the statistics', () => {
    const rows = raw.prepare("select idx, stat from sqlite_stat1 where tbl = 'messages'").all() as Array<{
      idx: string;
      stat: string;
    }>;
    expect(rows.map((r) => r.idx)).toContain('messages_org_status_time');
  });

  it('status + template + dates walks (org, status, created_at), not every message of the range', async () => {
    expect(await planOf({ statuses: ['bounced'], template_id: 'welcome', from: 1, to: 2 })).toMatch(
      /^SEARCH messages USING INDEX messages_org_status_time \(org_id=\? AND status=\? AND created_at>\? AND created_at<\?\)$/,
    );
  });

  it('template + dates walks (org, template_id, created_at)', async () => {
    expect(await planOf({ template_id: 'welcome', from: 1, to: 2 })).toMatch(
      /USING INDEX messages_org_template_time \(org_id=\? AND template_id=\? AND created_at>/,
    );
  });

  it('status + dates walks (org, status, created_at)', async () => {
    expect(await planOf({ statuses: ['complained'], from: 1, to: 2 })).toMatch(
      /USING INDEX messages_org_status_time \(org_id=\? AND status=\? AND created_at>/,
    );
  });

  it('several statuses: one walk of the status index each, none sorting', async () => {
    const plan = await planOf({ statuses: ['failed', 'complained'] });
    expect(plan.split(' || ')).toEqual([
      'SEARCH messages USING INDEX messages_org_status_time (org_id=? AND status=?)',
      'SEARCH messages USING INDEX messages_org_status_time (org_id=? AND status=?)',
    ]);
  });

  it('the first page walks (org, created_at)', async () => {
    expect(await planOf({})).toBe('SEARCH messages USING INDEX messages_org_time (org_id=?)');
  });
});
