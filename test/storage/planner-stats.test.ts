import Sqlite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../src/storage/dialect.js';
import type { HistoryFilter } from '../../src/storage/history.js';
import { messagesRepo } from '../../src/storage/messages.js';
import type { Database } from '../../src/storage/schema.js';
import { freshDatabase, type TestDatabase } from '../support/stores.js';

/**
 * Migration 0011 gives SQLite's planner statistics, so each history filter walks the index
 * that serves it (goal 3 of issue 16). The plans are read from SQLite itself: every statement
 * the messages repository prepares for a page is explained as it runs.
 */
describe('history query plans on SQLite (migration 0011_planner_stats)', () => {
  let database: TestDatabase;
  let raw: Sqlite.Database;
  let plans: string[];
  let history: (f: HistoryFilter) => Promise<unknown>;

  beforeAll(async () => {
    database = await freshDatabase('sqlite');
    const opened = await openDatabase(database.url);
    await migrate(opened);
    await opened.file?.close();
    await opened.db.destroy();
    raw = new Sqlite(database.url.slice('sqlite:'.length));
    plans = [];
    const explaining = {
      close: () => raw.close(),
      prepare: (text: string) => {
        if (text.startsWith('select')) {
          const params = (text.match(/\?/g) ?? []).map(() => 1);
          const rows = raw.prepare(`explain query plan ${text}`).all(...params) as Array<{ detail: string }>;
          plans.push(rows.map((r) => r.detail).join(' | '));
        }
        return raw.prepare(text);
      },
    };
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: explaining }) });
    const repo = messagesRepo(db, 'sqlite');
    history = (f) => repo.history('acme', f, 26);
  });
  afterAll(async () => {
    raw.close();
    await database.drop();
  });

  async function planOf(f: HistoryFilter): Promise<string> {
    plans = [];
    await history(f);
    return plans.join(' || ');
  }

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
