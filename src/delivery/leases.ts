import type { Clock } from '../domain/clock.js';
import type { ClaimedMessage } from '../storage/queue-types.js';
import { storageTrouble } from '../errors/storage-trouble.js';
import type { Store } from '../storage/store.js';

/**
 * Storage trouble (the database away, a full disk) is an expected state, logged by the claim
 * loop's pause: here a one-line warning, not an error with a stack every time a timer fires.
 */
export function logStorageAware(logger: LeaseDeps['logger'], err: unknown, msg: string, extra: object = {}): void {
  const reason = storageTrouble(err);
  if (reason === undefined) logger.error({ err, ...extra }, msg);
  else logger.warn({ reason, err: err instanceof Error ? err.message : String(err), ...extra }, msg);
}

export interface LeaseDeps {
  store: Store;
  /**
   * The store that gives claims back (giveBack): the worker's, which tries again while the
   * storage is unavailable (storage-retry.ts). Default: `store`. Claims are never retried here:
   * the claim loop pauses instead (ClaimPause).
   */
  givingBack?: Store;
  clock: Clock;
  logger: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export interface LeaseOptions {
  /** How long a claim lasts before the reaper may give the message to another worker. */
  leaseMs: number;
  /** How often the heartbeat renews the leases still held (real time); see WorkerOptions. */
  renewEveryMs: number;
}

/**
 * The messages a worker has claimed and not yet attempted: it holds them (claim), renews their
 * leases while they wait (the heartbeat), lets go of each once its attempt is over, and gives
 * back what it still holds (a batch whose context cannot be read, a stop).
 *
 * Lease writes run one at a time, and each sets the new lease on the message inside the write.
 * An attempt that is over leaves `claimed` first (letGo) and its outcome write waits for the
 * lease write under way, so every outcome names the lease the database has, on PostgreSQL too,
 * where transactions run side by side.
 */
export class Leases {
  private readonly claimed = new Map<string, ClaimedMessage>();
  private writes: Promise<unknown> = Promise.resolve();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: LeaseDeps,
    private readonly options: LeaseOptions,
  ) {}

  /** Claims up to `limit` due messages and holds them. */
  async claim(limit: number): Promise<ClaimedMessage[]> {
    const now = this.deps.clock.now();
    // A claim lost to a power cut only means the message is claimed again: no flush needed.
    const batch = await this.deps.store.transaction((tx) => tx.queue.claim(now, limit, this.options.leaseMs), { durable: false });
    for (const m of batch) this.claimed.set(m.id, m);
    return batch;
  }

  startHeartbeat(): void {
    this.heartbeat = setInterval(() => {
      this.renewDue().catch((err: unknown) => logStorageAware(this.deps.logger, err, 'renewing leases failed'));
    }, this.options.renewEveryMs);
    this.heartbeat.unref();
  }

  stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** The heartbeat: every held lease past a third of its life is moved on. */
  private async renewDue(): Promise<void> {
    const now = this.deps.clock.now();
    const due = [...this.claimed.values()].filter((m) => m.lease_until - now < (this.options.leaseMs * 2) / 3);
    if (due.length > 0) await this.renew(due);
  }

  /**
   * Moves the leases of these messages on, if this worker still holds them (still claimed here
   * and unchanged in the database); returns the ids it still holds.
   */
  renew(messages: readonly ClaimedMessage[]): Promise<Set<string>> {
    const { store, clock } = this.deps;
    const run = this.writes.then(async () => {
      const held = messages.filter((m) => this.claimed.has(m.id));
      if (held.length === 0) return new Set<string>();
      const until = clock.now() + this.options.leaseMs;
      // Losing a renewal to a power cut only lets the lease expire as it would have: no flush.
      return store.transaction(
        async (tx) => {
          const renewed = new Set(
            await tx.queue.renewLeases(
              held.map((m) => ({ id: m.id, lease: m.lease_until })),
              until,
            ),
          );
          for (const m of held) if (renewed.has(m.id)) m.lease_until = until;
          return renewed;
        },
        { durable: false },
      );
    });
    this.writes = run.catch(() => undefined);
    return run;
  }

  /** The attempt is over: no lease write touches the message again; wait for one under way. */
  letGo(m: ClaimedMessage): Promise<unknown> {
    this.claimed.delete(m.id);
    return this.writes;
  }

  /** Resolves once the lease write under way (if any) has landed. */
  settled(): Promise<unknown> {
    return this.writes;
  }

  /**
   * The storage failed under an attempt (a read before sending, or an outcome that could not be
   * written for the whole lease): the message goes back to the queue as soon as writes work, not
   * after its lease. Sent already or not, a resend keeps its Message-ID (at-least-once). False,
   * doing nothing, for any other error.
   */
  async releaseOnStorageTrouble(m: ClaimedMessage, err: unknown): Promise<boolean> {
    if (storageTrouble(err) === undefined) return false;
    await this.giveBack([m], 'storage_unavailable');
    return true;
  }

  /**
   * Releases these claims (queued again, due now, the attempt not counted). Should that fail too,
   * the leases, no longer renewed, expire and the reaper takes the messages back.
   */
  async giveBack(batch: readonly ClaimedMessage[], reason: string): Promise<void> {
    for (const m of batch) void this.letGo(m);
    await this.writes;
    const now = this.deps.clock.now();
    await (this.deps.givingBack ?? this.deps.store)
      .transaction(
        async (tx) => {
          for (const m of batch) await tx.queue.release(m.id, m.lease_until, now, reason);
        },
        { durable: false },
      )
      .catch((err: unknown) =>
        logStorageAware(this.deps.logger, err, 'giving claimed messages back failed; their leases will expire', {
          messages: batch.length,
        }),
      );
  }

  /** A stop: whatever is still held goes back to the queue untouched, one message at a time. */
  async giveUpAll(reason: string): Promise<void> {
    await this.writes;
    const now = this.deps.clock.now();
    for (const m of this.claimed.values())
      await this.deps.store.queue.release(m.id, m.lease_until, now, reason).catch(() => undefined);
    this.claimed.clear();
  }
}
