import { storageTrouble, type StorageTrouble } from '../errors/storage-trouble.js';

/** The storage trouble a process saw last, while it lasts. */
export interface TroubleState {
  kind: StorageTrouble;
  /** When this spell of trouble began (ms since the epoch, wall clock). */
  since: number;
  /** When it was seen last. */
  lastSeen: number;
  /** The last error's message (for the one log line and the health details). */
  message: string;
}

export type HealthListener = (event: {
  kind: StorageTrouble;
  state: 'began' | 'ended';
  message: string;
  lastedMs?: number;
}) => void;

/**
 * A process's storage health: the trouble seen last and since when, cleared by a success. The
 * pool (PostgreSQL), the store's transactions, the error handler and the worker report into it;
 * /v1/health reads it. One line is logged when a spell of trouble begins and one when it ends
 * (the listener), never one per failing request.
 *
 * What clears what: any round trip that works shows the database is reachable again; only a
 * write that commits shows there is room again (reads work on a full disk).
 */
export class StorageHealth {
  private state: TroubleState | undefined;
  private readonly listeners = new Set<HealthListener>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Classifies `err`; if it is storage trouble, records it and returns its kind. */
  report(err: unknown): StorageTrouble | undefined {
    const kind = storageTrouble(err);
    if (kind === undefined) return undefined;
    const at = this.now();
    const message = err instanceof Error ? err.message : String(err);
    if (this.state?.kind === kind) {
      this.state.lastSeen = at;
      this.state.message = message;
      return kind;
    }
    const previous = this.state;
    this.state = { kind, since: at, lastSeen: at, message };
    if (previous !== undefined)
      this.emit({ kind: previous.kind, state: 'ended', message: previous.message, lastedMs: at - previous.since });
    this.emit({ kind, state: 'began', message });
    return kind;
  }

  /** A round trip worked: the database is reachable (a full disk may still refuse writes). */
  reached(): void {
    if (this.state?.kind === 'database_unavailable') this.clear();
  }

  /** A write committed: the database is reachable and has room. */
  wrote(): void {
    if (this.state !== undefined) this.clear();
  }

  current(): TroubleState | undefined {
    return this.state === undefined ? undefined : { ...this.state };
  }

  /** Hears when a spell of trouble begins and ends; returns the function that stops it. */
  listen(fn: HealthListener): () => void {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  private clear(): void {
    const ended = this.state;
    this.state = undefined;
    if (ended !== undefined)
      this.emit({ kind: ended.kind, state: 'ended', message: ended.message, lastedMs: this.now() - ended.since });
  }

  private emit(event: Parameters<HealthListener>[0]): void {
    for (const fn of this.listeners) fn(event);
  }
}
