import { storageTrouble, type StorageTrouble } from '../errors/storage-trouble.js';

/** The longest pause between two claims while the storage is unavailable (ms). */
export const CLAIM_PAUSE_MAX_MS = 2_000;

export interface PauseLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * The claim loop's pause while the database is unreachable (or the disk full): claims back off
 * from the poll interval, doubling up to CLAIM_PAUSE_MAX_MS (2 s: after the database is back,
 * delivery resumes within about that, and a refused connection costs nothing to try), with one
 * log line when the pause begins and one when claiming resumes, instead of an error and a stack
 * every poll (every 500 ms).
 */
export class ClaimPause {
  private pausedAt: number | undefined;
  private kind: StorageTrouble | undefined;
  private delay = 0;

  constructor(
    private readonly logger: PauseLogger,
    private readonly pollMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A claim failed: the wait before the next one, or undefined when it was no storage trouble. */
  failed(err: unknown, extra: object = {}): number | undefined {
    const kind = storageTrouble(err);
    if (kind === undefined) return undefined;
    if (this.pausedAt === undefined) {
      this.pausedAt = this.now();
      this.kind = kind;
      this.delay = Math.max(this.pollMs, 50);
      this.logger.warn(
        { reason: kind, err: err instanceof Error ? err.message : String(err), ...extra },
        kind === 'storage_full'
          ? 'claiming paused: the storage is full; retrying with backoff ' +
              'until writes work (messages under way are settled once they do)'
          : 'claiming paused: the database is unavailable; retrying with ' +
              'backoff until it is back (messages under way are settled once it is)',
      );
      return this.delay;
    }
    this.delay = Math.min(this.delay * 2, CLAIM_PAUSE_MAX_MS);
    return this.delay;
  }

  /** A claim worked: logs the end of a pause, if there was one. */
  succeeded(): void {
    if (this.pausedAt === undefined) return;
    this.logger.info(
      { reason: this.kind, paused_ms: this.now() - this.pausedAt },
      this.kind === 'storage_full' ? 'claiming resumed: writes work again' : 'claiming resumed: the database is back',
    );
    this.pausedAt = undefined;
    this.kind = undefined;
  }

  get paused(): boolean {
    return this.pausedAt !== undefined;
  }
}
