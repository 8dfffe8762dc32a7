import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** What group commit needs from the file behind it after each COMMIT. */
export interface CommitFollowUp {
  /** Resolves once the commit just made is durable (`durable`), or at once. */
  committed(durable: boolean): Promise<void>;
  close(): Promise<void>;
}

/**
 * The writer's own automatic checkpoint, in pages: only a backstop behind the thread's. It runs
 * inside a commit, on the event loop, and under heavy writes costs ~55 ms of blocking I/O: at
 * 10,000 pages (40 MB) the retention purge (~40 MB of WAL a second at 1,700 messages/s) reached
 * it every ~1 s, before the thread's checkpoint let the WAL start over, and held the API's p99
 * at 28 ms and p99.9 at 103 ms (bench:scale, 1 M messages); at 50,000 (200 MB of disk at most)
 * 16 and 26 ms.
 */
export const BACKSTOP_CHECKPOINT_PAGES = 50_000;

export interface WalKeeperOptions {
  /** How often the thread runs a PASSIVE checkpoint. */
  checkpointEveryMs?: number;
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
 *   stays on at BACKSTOP_CHECKPOINT_PAGES in case the thread falls behind or dies.
 */
export class WalKeeper implements CommitFollowUp {
  private fd: Promise<number> | undefined;
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;
  private commits = 0;
  private checkpointer: Worker | undefined;

  private readonly checkpointEveryMs: number;
  private readonly warn: (message: string) => void;

  constructor(private readonly dbFile: string, options: WalKeeperOptions = {}) {
    this.checkpointEveryMs = options.checkpointEveryMs ?? 200;
    this.warn = options.warn ?? (() => undefined);
  }

  committed(durable: boolean): Promise<void> {
    this.commits += 1;
    if (this.commits === COMMITS_BEFORE_CHECKPOINTER) this.startCheckpointer();
    return durable ? this.sync() : Promise.resolve();
  }

  private sync(): Promise<void> {
    if (this.running === undefined) {
      this.running = this.flushOnce().finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    this.next ??= this.running.catch(() => undefined).then(() => {
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
    const fd = await this.fd;
    await new Promise<void>((resolve, reject) => fs.fdatasync(fd, (err) => (err === null ? resolve() : reject(err))));
  }

  /** The WAL exists from the first commit on; its directory entry is synced once, too. */
  private async openWal(): Promise<number> {
    const fd = await new Promise<number>((resolve, reject) => fs.open(`${this.dbFile}-wal`, 'r', (err, n) => (err === null ? resolve(n) : reject(err))));
    const dir = await fs.promises.open(path.dirname(this.dbFile), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    return fd;
  }

  private startCheckpointer(): void {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(CHECKPOINT_THREAD, { eval: true, workerData: { file: this.dbFile, driver, everyMs: this.checkpointEveryMs } });
    // Never a reason to keep the process alive or to crash it: the backstop bounds the WAL.
    // Not restarted either: whatever stopped it would most likely stop the next one too.
    worker.unref();
    const stopped = (reason: string) => {
      if (this.checkpointer !== worker) return;
      this.checkpointer = undefined;
      this.warn(`the WAL checkpoint thread stopped (${reason}); the writer now checkpoints every ${BACKSTOP_CHECKPOINT_PAGES} pages itself, inside a commit`);
    };
    worker.on('error', (err) => stopped(err.message));
    worker.on('exit', (code) => stopped(`exit code ${code}`));
    this.checkpointer = worker;
  }

  async close(): Promise<void> {
    await this.running?.catch(() => undefined);
    await this.next?.catch(() => undefined);
    const checkpointer = this.checkpointer;
    this.checkpointer = undefined;
    await checkpointer?.terminate();
    const fd = this.fd;
    this.fd = undefined;
    const n = await fd?.catch(() => undefined);
    if (n !== undefined) fs.closeSync(n);
  }
}

const CHECKPOINT_THREAD = `
const { workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
// A checkpoint syncs the WAL before copying it and the database file after (FULL or NORMAL).
db.pragma('synchronous = FULL');
setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy or closing: next round */ }
}, workerData.everyMs);
`;
