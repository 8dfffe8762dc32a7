import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, migrate } from '../../src/storage/dialect.js';
import { GroupCommit, MAX_JOBS } from '../../src/storage/group-commit.js';
import { BACKSTOP_CHECKPOINT_PAGES, WalKeeper, type CommitFollowUp } from '../../src/storage/wal-keeper.js';
import { freshDatabase, type TestDatabase } from '../support/stores.js';
import { waitFor } from '../support/smtp-sink.js';

/** A follow-up that holds every durable commit until the test lets it go. */
class HeldFlush implements CommitFollowUp {
  readonly calls: boolean[] = [];
  private releases: Array<() => void> = [];
  committed(durable: boolean): Promise<void> {
    this.calls.push(durable);
    if (!durable) return Promise.resolve();
    return new Promise((resolve) => this.releases.push(resolve));
  }
  release(): void {
    for (const r of this.releases.splice(0)) r();
  }
  async close(): Promise<void> {
    this.release();
  }
}

const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
};

describe('SQLite group commit and its write-ahead log', () => {
  let database: TestDatabase;
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
    await database.drop();
  });

  async function open() {
    database = await freshDatabase('sqlite');
    const opened = await openDatabase(database.url);
    closers.push(() => opened.db.destroy());
    await migrate(opened);
    await sql`create table scratch (v text not null)`.execute(opened.db);
    return opened;
  }

  it('a durable write is reported only after its flush, and is visible (committed) before that', async () => {
    const { db } = await open();
    const flush = new HeldFlush();
    const group = new GroupCommit(db, flush);
    const write = group.run((conn) => sql`insert into scratch (v) values ('x')`.execute(conn), { durable: true });
    await waitFor(() => flush.calls.length === 1, 5_000, 'the flush to be asked for');
    expect(flush.calls).toEqual([true]);
    expect(await settled(write)).toBe(false);
    const rows = await sql<{ n: number }>`select count(*) as n from scratch`.execute(db);
    expect(rows.rows[0]?.n).toBe(1);
    flush.release();
    await write;
  });

  it('bookkeeping writes (durable: false) are not held for a flush', async () => {
    const { db } = await open();
    const flush = new HeldFlush();
    const group = new GroupCommit(db, flush);
    await group.run((conn) => sql`insert into scratch (v) values ('y')`.execute(conn), { durable: false });
    expect(flush.calls).toEqual([false]);
  });

  it('a failed flush fails every write of the batch', async () => {
    const { db } = await open();
    const failing: CommitFollowUp = {
      committed: async (durable) => {
        if (durable) throw new Error('EIO');
      },
      close: async () => undefined,
    };
    const group = new GroupCommit(db, failing);
    const writes = ['a', 'b'].map((v) => group.run((conn) => sql`insert into scratch (v) values (${v})`.execute(conn)));
    for (const w of writes) await expect(w).rejects.toThrow('EIO');
  });

  it(
    'sends (durable) and bookkeeping (not durable) asked for in one turn ' +
      'commit apart, sends first; the bookkeeping does not wait for the flush',
    async () => {
      const { db } = await open();
      const flush = new HeldFlush();
      const group = new GroupCommit(db, flush);
      const claim = group.run((conn) => sql`insert into scratch (v) values ('claim')`.execute(conn), { durable: false });
      const send = group.run((conn) => sql`insert into scratch (v) values ('send')`.execute(conn), { durable: true });
      await claim;
      expect(flush.calls).toEqual([true, false]);
      const rows = await sql<{ v: string }>`select v from scratch order by rowid`.execute(db);
      expect(rows.rows.map((r) => r.v)).toEqual(['send', 'claim']);
      expect(await settled(send)).toBe(false);
      flush.release();
      await send;
    },
  );

  it('a transaction takes MAX_JOBS jobs at most: the rest commit next, in their order, each job once', async () => {
    const { db } = await open();
    const flush = new HeldFlush();
    const group = new GroupCommit(db, flush);
    const values = Array.from({ length: 2 * MAX_JOBS + 2 }, (_, i) => i);
    const writes = values.map((v) =>
      group.run(async (conn) => {
        await sql`insert into scratch (v) values (${String(v)})`.execute(conn);
        if (v === MAX_JOBS) throw new Error('refused');
      }),
    );
    await waitFor(() => flush.calls.length >= 3, 5_000, 'three flushes');
    expect(flush.calls).toEqual([true, true, true]);
    flush.release();
    const results = await Promise.allSettled(writes);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    const rows = await sql<{ v: string }>`select v from scratch order by rowid`.execute(db);
    expect(rows.rows.map((r) => Number(r.v))).toEqual(values.filter((v) => v !== MAX_JOBS));
  });

  it('bookkeeping waits behind a backlog of sends, but not for ever (OTHERS_WAIT_MS)', async () => {
    const { db } = await open();
    const group = new GroupCommit(db, new HeldFlush());
    // Sends that keep coming, each holding the loop a while: a backlog that never clears.
    let sending = true;
    const busy = () => {
      const until = performance.now() + 5;
      while (performance.now() < until) {
        /* a batch's worth of sends */
      }
    };
    const keepSending = () => {
      if (!sending) return;
      void group
        .run(async (conn) => {
          busy();
          await sql`insert into scratch (v) values ('send')`.execute(conn);
        })
        .catch(() => undefined);
      setImmediate(keepSending);
    };
    keepSending();
    // Resolves although the sends never stop (starved, it would time the test out).
    await group.run((conn) => sql`insert into scratch (v) values ('claim')`.execute(conn), { durable: false });
    sending = false;
    const sendsBefore = await sql<{
      n: number;
    }>`select count(*) as n from scratch where rowid < (select rowid from scratch where v = 'claim')`.execute(db);
    // Sends went first (the claim was asked for right after the first).
    expect(sendsBefore.rows[0]?.n).toBeGreaterThan(0);
  });

  it('durable writes through the real WAL flush all commit and resolve, however many at once', async () => {
    const { db } = await open();
    const file = database.url.slice('sqlite:'.length);
    const keeper = new WalKeeper(file);
    closers.push(() => keeper.close());
    const group = new GroupCommit(db, keeper);
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => group.run((conn) => sql`insert into scratch (v) values (${`v${i}`})`.execute(conn))),
    );
    const rows = await sql<{ n: number }>`select count(*) as n from scratch`.execute(db);
    expect(rows.rows[0]?.n).toBe(50);
  });

  it('a WAL that cannot be flushed is an error, not a silent success, and not a lasting one', async () => {
    await open();
    const missing = path.join(path.dirname(database.url.slice('sqlite:'.length)), 'missing.db');
    const keeper = new WalKeeper(missing);
    closers.push(() => keeper.close());
    await expect(keeper.committed(true)).rejects.toThrow(/ENOENT/);
    await expect(keeper.committed(false)).resolves.toBeUndefined();
    // The failure is not kept: once the file is there, the next flush succeeds.
    fs.writeFileSync(`${missing}-wal`, '');
    await expect(keeper.committed(true)).resolves.toBeUndefined();
  });

  it('checkpoints from its own thread: the database file takes the pages with no checkpoint by the writer', async () => {
    const { db } = await open();
    const file = database.url.slice('sqlite:'.length);
    const warnings: string[] = [];
    const keeper = new WalKeeper(file, { checkpointEveryMs: 20, warn: (m) => warnings.push(m) });
    closers.push(() => keeper.close());
    const group = new GroupCommit(db, keeper);
    const before = fs.statSync(file).size;
    const blob = 'x'.repeat(16_000);
    // ~1.6 MB in 100 commits: far below the writer's own backstop (BACKSTOP_CHECKPOINT_PAGES).
    for (let i = 0; i < 100; i++) {
      await group.run((conn) => sql`insert into scratch (v) values (${`${i}${blob}`})`.execute(conn));
    }
    await waitFor(() => fs.statSync(file).size > before + 1_000_000, 10_000, 'the file to grow by the checkpoints');
    expect(fs.statSync(file).size).toBeGreaterThan(before + 1_000_000);
    // Ending the thread on close is not news.
    await keeper.close();
    expect(warnings).toEqual([]);
  });

  it('a checkpoint thread that stops unasked is reported once, and writes go on', async () => {
    await open();
    // A directory where the database file should be: the thread cannot open it and ends.
    const notAFile = fs.mkdtempSync(path.join(path.dirname(database.url.slice('sqlite:'.length)), 'dir-'));
    const warnings: string[] = [];
    const keeper = new WalKeeper(notAFile, { checkpointEveryMs: 10, warn: (m) => warnings.push(m) });
    closers.push(() => keeper.close());
    for (let i = 0; i < 64; i++) await keeper.committed(false);
    await waitFor(() => warnings.length > 0, 10_000, 'the warning');
    for (let i = 0; i < 64; i++) await keeper.committed(false);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      new RegExp(`checkpoint thread stopped .*the writer now checkpoints every ${BACKSTOP_CHECKPOINT_PAGES} pages`),
    );
  });
});
