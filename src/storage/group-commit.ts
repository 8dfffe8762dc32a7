import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { CommitFollowUp } from './wal-keeper.js';

// Fixed statements, compiled once: building each through the query builder cost a few µs,
// and a send runs two of them (its savepoint and release).
const SYNC_NORMAL = CompiledQuery.raw('pragma synchronous = NORMAL');
const SYNC_FULL = CompiledQuery.raw('pragma synchronous = FULL');
const BEGIN = CompiledQuery.raw('begin immediate');
const SAVEPOINT = CompiledQuery.raw('savepoint job');
const RELEASE = CompiledQuery.raw('release job');
const ROLLBACK_TO = CompiledQuery.raw('rollback to job');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

/**
 * Jobs per transaction at most: ~10 ms of work at ~150 µs a send. A count, not a time: cut by
 * the clock, a starved CPU (load 18 here) made slices of a few sends, and the extra commits
 * cost throughput when it was scarcest (CPU per send 4.9 → 7.5 ms in one such run). Above
 * the 50 connections of the throughput goal, so a closed loop's turn still commits as one.
 */
export const MAX_JOBS = 64;

/**
 * The longest the bookkeeping waits behind a backlog of sends (ms). A claim every 50 ms of
 * up to 50 messages still lets the worker deliver ~1,000 msg/s, while under overload
 * it takes at most one transaction in 50 ms of the loop from acceptance.
 */
export const OTHERS_WAIT_MS = 50;

/**
 * SYNC_NORMAL (unless `fullCommit`) and BEGIN IMMEDIATE. A transaction still open here is one
 * whose ROLLBACK failed after an error (the connection is ours alone while a batch runs, so it
 * is no one else's): it is rolled back now, or every later batch would fail on it ("cannot
 * start a transaction within a transaction") long after the disk had room again.
 */
async function begin(conn: Kysely<Database>, fullCommit: boolean): Promise<void> {
  const open = async () => {
    if (!fullCommit) await conn.executeQuery(SYNC_NORMAL);
    await conn.executeQuery(BEGIN);
  };
  try {
    await open();
  } catch (err) {
    if (!/inside a transaction|within a transaction/.test(String(err))) throw err;
    await conn.executeQuery(ROLLBACK);
    await open();
  }
}

interface Job<R> {
  fn: (db: Kysely<Database>) => Promise<unknown>;
  durable: boolean;
  /** When it was asked for (performance.now()). */
  at: number;
  resolve: (value: R) => void;
  reject: (reason: unknown) => void;
}

/**
 * Group commit for SQLite. With synchronous=FULL every COMMIT waits for the disk; one commit
 * per request held a send at ~230 req/s on this machine. Here every transaction asked for in
 * one event-loop turn runs inside a single BEGIN IMMEDIATE … COMMIT, each in its own SAVEPOINT
 * (a failing one rolls back alone), and all of them resolve only after the shared COMMIT is
 * durable (see WalKeeper for how that flush leaves the event loop), so a 202 still means "on
 * disk". BEGIN IMMEDIATE takes the write lock up front: a second process (mailroom worker)
 * then waits through busy_timeout instead of failing a lock upgrade half-way.
 *
 * Two bounds keep one transaction from holding the event loop (every statement runs on it):
 * - Sends (durable) and the worker's bookkeeping (claims, outcomes: not durable) commit apart,
 *   sends first. A send's 202 no longer waits for a claim of 25–50 messages in its
 *   transaction (~1–3 ms of SQL); the bookkeeping runs while the sends' flush is on the disk,
 *   which the sends wait for anyway (fdatasync here: p50 ~3 ms, p99 ~15 ms). Under a backlog
 *   of sends the bookkeeping waits, up to OTHERS_WAIT_MS: delivery slows while acceptance
 *   catches up, and catches up in turn after.
 * - A transaction takes at most MAX_JOBS jobs; the rest commit in the next one, after a turn
 *   of the event loop. A backlog (after a GC pause or a starved CPU) otherwise went into one
 *   transaction: 150 sends held the loop for ~250 ms on this busy 2-core machine, during
 *   which no finished flush could answer and no request was read.
 */
export class GroupCommit {
  private queue: Array<Job<never>> = [];
  private scheduled = false;
  private lingering: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly syncing = new Set<Promise<void>>();

  /** `file` flushes durable batches after their COMMIT; without one, COMMIT does (FULL). */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly file?: CommitFollowUp,
  ) {}

  /**
   * `lingerMs` > 0 lets a write that nobody waits on (the worker recording an outcome) wait
   * that long for company: recording 1,000 deliveries a second took ~730 commits of ~1.3 ms
   * each, a third of the worker's time, with a few writes per commit. Any immediate write
   * that comes meanwhile takes the lingering ones along.
   */
  run<T>(fn: (db: Kysely<Database>) => Promise<T>, options: { lingerMs?: number; durable?: boolean } = {}): Promise<T> {
    const lingerMs = options.lingerMs ?? 0;
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        fn,
        durable: options.durable !== false,
        at: performance.now(),
        resolve: resolve as (v: never) => void,
        reject,
      });
      if (lingerMs > 0) {
        this.lingering ??= setTimeout(() => this.schedule(), lingerMs);
      } else {
        this.schedule();
      }
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.flushing = this.flushing.then(() => this.flush());
    });
  }

  /** Resolves once everything queued so far has committed or failed. */
  async drain(): Promise<void> {
    if (this.queue.length > 0) this.schedule();
    while (this.scheduled || this.queue.length > 0) await new Promise((r) => setImmediate(r));
    await this.flushing;
    await Promise.all([...this.syncing]);
  }

  /**
   * The jobs of the next transaction, in the order they came: the durable ones while any wait,
   * unless the oldest other job has waited OTHERS_WAIT_MS.
   */
  private take(): { durable: boolean; jobs: Array<Job<never>> } {
    const oldestOther = this.queue.find((job) => !job.durable);
    const durable =
      this.queue.some((job) => job.durable) && (oldestOther === undefined || performance.now() - oldestOther.at < OTHERS_WAIT_MS);
    const jobs = this.queue.filter((job) => job.durable === durable);
    this.queue = this.queue.filter((job) => job.durable !== durable);
    return { durable, jobs };
  }

  private async flush(): Promise<void> {
    try {
      // The WAL is being reset (WalKeeper): jobs queue meanwhile and join this transaction.
      const reset = this.file?.beforeBegin?.();
      if (reset !== undefined) await reset;
      await this.flushSlice();
    } finally {
      // What the slice left, and the other kind's jobs, go in the next turn.
      if (this.queue.length > 0) this.schedule();
    }
  }

  private async flushSlice(): Promise<void> {
    this.scheduled = false;
    clearTimeout(this.lingering);
    this.lingering = undefined;
    const { durable, jobs: taken } = this.take();
    if (taken.length === 0) return;
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    // A batch of writes nobody needs on disk before moving on (worker bookkeeping: losing one
    // to a power cut means a message is sent again, which at-least-once delivery allows) skips
    // the flush: synchronous=NORMAL in WAL mode still survives a crash of the process. A
    // durable batch commits the same way and is flushed by the WalKeeper, off the event loop,
    // when there is one (a file database); otherwise its COMMIT flushes (synchronous=FULL).
    const fullCommit = durable && this.file === undefined;
    let batch = taken;
    try {
      await this.db.connection().execute(async (conn) => {
        await begin(conn, fullCommit);
        try {
          if (taken.length > MAX_JOBS) {
            // The rest go first in the next transaction, in their order.
            batch = taken.slice(0, MAX_JOBS);
            this.queue = [...taken.slice(MAX_JOBS), ...this.queue];
          }
          for (const job of batch) {
            await conn.executeQuery(SAVEPOINT);
            try {
              outcomes.push({ ok: true, value: await job.fn(conn) });
              await conn.executeQuery(RELEASE);
            } catch (error) {
              outcomes.push({ ok: false, error });
              // SQLITE_FULL or an I/O error may roll back the whole transaction, savepoints
              // and all: then the batch fails with that cause (a full disk is a 503
              // storage_full), not with the "no such savepoint" that follows it.
              await conn.executeQuery(ROLLBACK_TO).catch(() => {
                throw error;
              });
              await conn.executeQuery(RELEASE);
            }
          }
          await conn.executeQuery(COMMIT);
        } catch (err) {
          await conn.executeQuery(ROLLBACK).catch(() => undefined);
          throw err;
        } finally {
          if (!fullCommit) await conn.executeQuery(SYNC_FULL).catch(() => undefined);
        }
      });
    } catch (err) {
      // The batch as a whole did not commit (disk full, I/O error): nothing of it is durable.
      for (const job of batch) job.reject(err);
      return;
    }
    const settle = (): void =>
      batch.forEach((job, i) => {
        const o = outcomes[i];
        if (o?.ok === true) job.resolve(o.value as never);
        else job.reject(o?.error);
      });
    if (this.file === undefined) {
      settle();
      return;
    }
    // Not awaited: the next batch commits while this one's flush runs. Nobody hears of this
    // batch before its bytes are on disk; a failed flush fails every job of it (committed or
    // not, the caller cannot be told "accepted"; an idempotent retry then finds the record).
    const pending = this.file.committed(durable).then(settle, (err: unknown) => {
      for (const job of batch) job.reject(err);
    });
    this.syncing.add(pending);
    void pending.finally(() => this.syncing.delete(pending));
  }
}
