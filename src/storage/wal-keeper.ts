import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { fromDatabase } from '../errors/storage-trouble.js';

/** What group commit needs from the file behind it around each transaction. */
export interface CommitFollowUp {
  /** Resolves once the commit just made is durable (`durable`), or at once. */
  committed(durable: boolean): Promise<void>;
  /**
   * Undefined when the next transaction may begin at once; otherwise a promise to wait for
   * first (the WAL is being reset while the writer stands aside). Never rejects.
   */
  beforeBegin?(): Promise<void> | undefined;
  close(): Promise<void>;
}

/**
 * The most a WAL file takes while no other process holds a read transaction open for long
 * (README, Performance): 40 MiB. Checked by test/storage/wal-bound.test.ts at a smaller scale.
 */
export const WAL_BOUND_BYTES = 40 * 1024 * 1024;

/**
 * Past this size the writer stands aside between two group commits while the thread runs a
 * TRUNCATE checkpoint. 8 MiB below the bound leaves room for the transaction that crossed it
 * (a group of 64 sends writes ~1.5 MB of frames) and a purge batch.
 */
export const WAL_RESET_BYTES = 32 * 1024 * 1024;

/**
 * On a disk with little room the reset comes sooner: once the WAL takes half of what it could
 * grow to (its size plus the free space), but never below this (each reset pauses the writes
 * for ~40–120 ms). A disk freed of a few MB after it filled is not filled again by the WAL.
 */
export const WAL_MIN_RESET_BYTES = 1024 * 1024;

/**
 * `journal_size_limit` for the writer's connection: when the WAL starts over without our reset
 * (a PASSIVE checkpoint caught up at an idle moment), SQLite cuts the file back to this.
 */
export const WAL_KEPT_BYTES = 16 * 1024 * 1024;

/**
 * The writer's own automatic checkpoint, in pages (10,000 × 4,120 bytes a frame = 41.2 MB, under
 * WAL_BOUND_BYTES): only a backstop behind the reset at WAL_RESET_BYTES, reached when the
 * checkpoint thread is gone. It runs inside a commit, on the event loop, and under heavy writes
 * cost ~55 ms of blocking I/O each time: before the reset existed, the retention purge reached
 * it every ~1 s and held the API's p99 at 28 ms (bench:scale, 1 M messages).
 */
export const BACKSTOP_CHECKPOINT_PAGES = 10_000;

/**
 * How long the thread's TRUNCATE checkpoint waits for another process's writer or readers
 * (the writer of this process stands aside): sends queue meanwhile, the event loop runs on.
 */
const RESET_BUSY_MS = 100;
/**
 * A reset that another process's reader refused is tried again at the next commit, up to
 * RESET_RETRIES times (a short read transaction ends within a few ms), then no sooner than
 * RESET_BACKOFF_MS later, doubling up to 16× while refusals go on (a long one, such as a
 * backup, would otherwise hold every commit back RESET_BUSY_MS).
 */
const RESET_RETRIES = 3;
const RESET_BACKOFF_MS = 250;

export interface WalKeeperOptions {
  /** How often the thread runs a PASSIVE checkpoint. */
  checkpointEveryMs?: number;
  /** Reset the WAL past this size (WAL_RESET_BYTES; smaller in tests). */
  resetAtBytes?: number;
  /** Told when the checkpoint thread stops unasked (the store has no logger of its own). */
  warn?: (message: string) => void;
}

/** Commits before the checkpoint thread starts: a store that writes little never needs one. */
const COMMITS_BEFORE_CHECKPOINTER = 64;

/**
 * Keeps a SQLite write-ahead log off the event loop, where better-sqlite3 would otherwise do
 * both of its slow parts:
 *
 * - Flushing. A `synchronous=FULL` COMMIT fsyncs on the JavaScript thread (~300 µs for a tiny
 *   transaction here, ~900 µs for a batch of sends) and nothing else runs meanwhile. Group
 *   commit instead commits with `synchronous=NORMAL` — the frames are in the WAL, which survives
 *   a crash of the process but not yet a power cut — and then awaits `committed(true)`, an
 *   fdatasync of the WAL on libuv's thread pool, before anyone hears "accepted". That is the
 *   guarantee FULL gives in WAL mode (the WAL synced after each commit), while the event loop
 *   goes on accepting. One flush runs at a time: a caller arriving during one may have written
 *   after it began, so it waits for the next, which covers everyone who queued meanwhile.
 * - Checkpointing. SQLite checkpoints inside whichever COMMIT pushes the WAL past 1,000 pages,
 *   copying them into the database file and fsyncing it: ~7 ms every ~15 commits while the
 *   worker delivered 1,500 msg/s, 60 % of all commit time. A thread with its own connection runs
 *   PASSIVE checkpoints instead (they never block the writer); the writer's automatic checkpoint
 *   stays on at BACKSTOP_CHECKPOINT_PAGES in case the thread dies.
 * - Resetting. A checkpoint copies frames into the database, but the WAL only starts over when
 *   one has copied all of them and a writer then begins; under sustained writes a PASSIVE
 *   checkpoint never catches the writer (each commit adds frames while it copies), so the file
 *   grew to the backstop's size (210 MB at 50,000 pages) and stayed there. Past
 *   WAL_RESET_BYTES (less on a small disk: see WAL_MIN_RESET_BYTES) the writer stands aside
 *   between two commits (`beforeBegin`) while the thread runs a TRUNCATE checkpoint: with no
 *   writer it copies the few frames the last PASSIVE one left, waits up to RESET_BUSY_MS for
 *   readers, and cuts the file to 0 bytes.
 */
export class WalKeeper implements CommitFollowUp {
  private fd: Promise<number> | undefined;
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;
  private commits = 0;
  private checkpointer: Worker | undefined;
  /** Once only: a thread that stopped is not started again (see startCheckpointer). */
  private started = false;
  /** The reset under way: the writer waits for it before its next BEGIN. */
  private resetting: Promise<void> | undefined;
  private endReset: (() => void) | undefined;
  /** performance.now() before which no reset is tried (after resets that readers refused). */
  private resetNotBefore = 0;
  private refusals = 0;

  private readonly checkpointEveryMs: number;
  private readonly resetAtBytes: number;
  private readonly warn: (message: string) => void;

  constructor(
    private readonly dbFile: string,
    options: WalKeeperOptions = {},
  ) {
    this.checkpointEveryMs = options.checkpointEveryMs ?? 200;
    this.resetAtBytes = options.resetAtBytes ?? WAL_RESET_BYTES;
    this.warn = options.warn ?? (() => undefined);
  }

  committed(durable: boolean): Promise<void> {
    this.commits += 1;
    if (this.commits === COMMITS_BEFORE_CHECKPOINTER && !this.started) this.startCheckpointer();
    this.resetIfLarge(); // may start the thread too: 64 commits of big rows can pass the size
    return durable ? this.sync() : Promise.resolve();
  }

  beforeBegin(): Promise<void> | undefined {
    return this.resetting;
  }

  /** A stat a commit (~2 µs) rather than a count of frames, which only SQLite knows. */
  private resetIfLarge(): void {
    if (this.resetting !== undefined || performance.now() < this.resetNotBefore) return;
    const size = fs.statSync(`${this.dbFile}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    if (size <= Math.min(WAL_MIN_RESET_BYTES, this.resetAtBytes) || size <= this.resetAt(size)) return;
    if (!this.started) this.startCheckpointer();
    const worker = this.checkpointer;
    if (worker === undefined) return;
    this.resetting = new Promise<void>((resolve) => {
      this.endReset = () => {
        this.resetting = undefined;
        this.endReset = undefined;
        resolve();
      };
    });
    worker.postMessage('reset');
  }

  /** The size past which the WAL is reset: resetAtBytes, or less on a disk with little room (statfs, ~5 µs). */
  private resetAt(size: number): number {
    let free = Number.POSITIVE_INFINITY;
    try {
      const fsStats = fs.statfsSync(path.dirname(this.dbFile));
      free = fsStats.bavail * fsStats.bsize;
    } catch {
      // No statfs here: the fixed size alone.
    }
    return Math.min(this.resetAtBytes, Math.max(WAL_MIN_RESET_BYTES, (size + free) / 2));
  }

  /**
   * The thread's answer: busy = 1 when readers or a writer held the reset off, `error` when it
   * failed (SQLITE_BUSY: another checkpoint ran; SQLITE_FULL: no room to copy the frames to).
   */
  private resetDone(result: { busy: number; error?: string }): void {
    if (result.busy === 0) {
      this.refusals = 0;
    } else {
      this.refusals += 1;
      const over = this.refusals - RESET_RETRIES;
      if (over > 0) this.resetNotBefore = performance.now() + RESET_BACKOFF_MS * 2 ** Math.min(over - 1, 4);
      const why = result.error ?? 'another connection holds a read transaction open';
      if (over === 1)
        this.warn(
          `the WAL could not be reset ${this.refusals} times in a row (${why}); ` +
            `it may grow past ${WAL_BOUND_BYTES / 1024 / 1024} MiB until that ends`,
        );
    }
    this.endReset?.();
  }

  private sync(): Promise<void> {
    if (this.running === undefined) {
      this.running = this.flushOnce().finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    this.next ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.sync();
      });
    return this.next;
  }

  private async flushOnce(): Promise<void> {
    // A failed open is not kept: the next flush tries again (and fails its own callers).
    this.fd ??= this.openWal().catch((err: unknown) => {
      this.fd = undefined;
      throw err;
    });
    // Marked as the database's: an ENOSPC here is the database full (storage-trouble.ts).
    const fd = await this.fd.catch((err: unknown) => {
      throw fromDatabase(err);
    });
    await new Promise<void>((resolve, reject) =>
      fs.fdatasync(fd, (err) => (err === null ? resolve() : reject(fromDatabase(err)))),
    );
  }

  /** The WAL exists from the first commit on; its directory entry is synced once, too. */
  private async openWal(): Promise<number> {
    const fd = await new Promise<number>((resolve, reject) =>
      fs.open(`${this.dbFile}-wal`, 'r', (err, n) => (err === null ? resolve(n) : reject(err))),
    );
    const dir = await fs.promises.open(path.dirname(this.dbFile), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    return fd;
  }

  private startCheckpointer(): void {
    this.started = true;
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(CHECKPOINT_THREAD, {
      eval: true,
      workerData: { file: this.dbFile, driver, everyMs: this.checkpointEveryMs, resetBusyMs: RESET_BUSY_MS },
    });
    // Never a reason to keep the process alive or to crash it: the backstop bounds the WAL.
    // Not restarted either: whatever stopped it would most likely stop the next one too.
    worker.unref();
    const stopped = (reason: string) => {
      if (this.checkpointer !== worker) return;
      this.checkpointer = undefined;
      this.endReset?.();
      this.warn(
        `the WAL checkpoint thread stopped (${reason}); the writer now ` +
          `checkpoints every ${BACKSTOP_CHECKPOINT_PAGES} pages itself, inside a commit`,
      );
    };
    worker.on('message', (result: { busy: number; error?: string }) => this.resetDone(result));
    worker.on('error', (err) => stopped(err.message));
    worker.on('exit', (code) => stopped(`exit code ${code}`));
    this.checkpointer = worker;
  }

  async close(): Promise<void> {
    await this.running?.catch(() => undefined);
    await this.next?.catch(() => undefined);
    const checkpointer = this.checkpointer;
    this.checkpointer = undefined;
    this.endReset?.();
    await checkpointer?.terminate();
    const fd = this.fd;
    this.fd = undefined;
    const n = await fd?.catch(() => undefined);
    if (n !== undefined) fs.closeSync(n);
  }
}

const CHECKPOINT_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
// A checkpoint syncs the WAL before copying it and the database file after (FULL or NORMAL).
db.pragma('synchronous = FULL');
setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy or closing: next round */ }
}, workerData.everyMs);
// The writer of this process stands aside until the answer: the busy wait is only for other
// processes, and bounded.
parentPort.on('message', () => {
  let result = { busy: 1 };
  let error;
  try {
    db.pragma('busy_timeout = ' + workerData.resetBusyMs);
    result = db.pragma('wal_checkpoint(TRUNCATE)')[0];
  } catch (err) { error = String(err.code || err); /* another checkpointer (SQLITE_BUSY), a full disk: tried again later */ }
  try { db.pragma('busy_timeout = 5000'); } catch { /* closing */ }
  parentPort.postMessage({ busy: result.busy, error });
});
`;
