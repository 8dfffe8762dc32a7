import type { BlobStore } from '../blobs/blob-store.js';
import type { Clock } from '../domain/clock.js';
import type { Metrics } from '../observability/metrics.js';
import type { ClaimedMessage } from '../storage/queue-types.js';
import type { Store } from '../storage/store.js';
import { readBatchContext, type BatchContext } from './batch-context.js';
import { ClaimPause } from '../domain/claim-pause.js';
import { Leases } from './leases.js';
import { retryingStore, type StorageRetry } from './storage-retry.js';
import { Outcomes } from './outcomes.js';
import type { Pacer } from './pacing.js';
import { MAINTENANCE_EVERY_MS, Reaper } from './reaper.js';
import type { AttemptDeps } from './attempt.js';
import { deliverClaimed, type DeliverDeps } from './deliver.js';
import { exposeBreakers, LocalBreakers, type Breakers } from './breaker.js';
import type { RetryPolicy } from './retry.js';
import { syntheticProber } from './probe.js';
import { TransportCache } from './transport-cache.js';
import { TRANSPORTS } from './transports/index.js';
import type { TransportFactory } from './transport.js';
import { createSandbox } from './transports/sandbox.js';
import type { EventNotifier } from '../events/types.js';
import { SimulatorTicker } from '../testmode/simulator-events.js';
import type { RawComposer } from './transports/raw-mime.js';

export interface WorkerLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface WorkerDeps {
  store: Store;
  clock: Clock;
  dataDir: string;
  /** Messages older than this many days are purged (MAILROOM_RETENTION_DAYS); absent: kept. */
  retentionDays?: number;
  /** Request log rows older than this many days are purged (MAILROOM_REQUEST_LOG_DAYS; 0: all); absent: kept. */
  requestLogDays?: number;
  /** Where attachment bytes live: purged messages and expired uploads take theirs along. */
  blobs?: BlobStore;
  pacer: Pacer;
  metrics: Metrics;
  logger: WorkerLogger;
  /**
   * Transports run on the event loop (tests inject fakes here). Absent: the built-in ones, in
   * a thread of their own (TransportThread).
   */
  transports?: Readonly<Record<string, TransportFactory>>;
  retry?: RetryPolicy;
  random?: () => number;
  /** Circuit breakers per service (shared through Redis by buildServices). Default: this worker's own. */
  breakers?: Breakers;
  /** Test mode (issue 27): delay@'s delay (default 60 s), test messages' retention, the composer tests wrap. */
  testMode?: { simulatorDelayMs: number; testRetentionDays?: number; compose?: RawComposer['compose'] };
  /** Told of every simulator event recorded (the process's: wakes the webhook dispatcher). */
  notifier?: EventNotifier;
}

export interface WorkerOptions {
  /** Messages claimed per round, and so sent at once at most (the SMTP pool queues the rest). */
  batchSize: number;
  /** How long a claim lasts before the reaper may give the message to another worker. */
  leaseMs: number;
  /** Sleep when the queue is empty, unless `nudge` wakes the worker earlier. */
  pollMs: number;
  /** How often expired leases are taken back, on a timer of its own (Reaper). */
  reapEveryMs: number;
  /**
   * How often the worker renews the leases of messages it still holds (real time). A claimed
   * message may wait in the transport's queue: 50 claimed behind a 5-connection pool, each
   * send up to the 60 s socket timeout against a stalling relay, is ~10 minutes, twice the
   * default lease. Without renewal the reaper would hand such messages to another claim while
   * this worker still meant to send them.
   */
  renewEveryMs: number;
}

export const DEFAULT_WORKER_OPTIONS: Readonly<WorkerOptions> = Object.freeze({
  batchSize: 50,
  // Longer than any single attempt (SMTP socket timeout 60 s) with room to spare.
  leaseMs: 5 * 60_000,
  pollMs: 500,
  reapEveryMs: 10_000,
  renewEveryMs: 60_000,
});

/**
 * The delivery worker: claims due messages, sends each through its service's transport and
 * records the outcome. Any number of workers may run against one PostgreSQL database.
 */
export class DeliveryWorker {
  private readonly options: WorkerOptions;
  private readonly transports: TransportCache;
  private readonly leases: Leases;
  private readonly outcomes: Outcomes;
  private readonly reaper: Reaper;
  private readonly attemptDeps: AttemptDeps;
  /** Outcome and lease writes, tried again while the storage is unavailable (storage-retry.ts). */
  private readonly writes: StorageRetry;
  private readonly pause: ClaimPause;
  /** What one message's attempt needs (deliver.ts): the sandbox for test-mode and simulator messages among it. */
  private readonly deliverDeps: DeliverDeps;
  /** The simulator's events after hand-off (testmode/simulator-events.ts). */
  private readonly simulator: SimulatorTicker;
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly deps: WorkerDeps,
    options: Partial<WorkerOptions> = {},
  ) {
    this.options = { ...DEFAULT_WORKER_OPTIONS, ...options };
    this.transports = new TransportCache(deps.dataDir, deps.transports);
    this.writes = retryingStore(deps.store, this.options.leaseMs);
    this.pause = new ClaimPause(deps.logger, this.options.pollMs);
    this.leases = new Leases({ ...deps, givingBack: this.writes.store }, this.options);
    this.outcomes = new Outcomes({ ...deps, store: this.writes.store }, this.leases);
    const testRetentionDays = deps.testMode?.testRetentionDays;
    this.reaper = new Reaper(
      { ...deps, ...(testRetentionDays !== undefined ? { testRetentionDays } : {}) },
      { reapEveryMs: this.options.reapEveryMs, maintenanceEveryMs: MAINTENANCE_EVERY_MS },
      () => this.nudge(),
    );
    this.simulator = new SimulatorTicker(deps);
    const breakers = deps.breakers ?? new LocalBreakers(deps.clock);
    exposeBreakers(deps.metrics, breakers);
    this.attemptDeps = {
      breakers,
      prober: syntheticProber({ factories: deps.transports ?? TRANSPORTS, dataDir: deps.dataDir, breakers, logger: deps.logger }),
      pacer: deps.pacer,
      outcomes: this.outcomes,
      metrics: deps.metrics,
      logger: deps.logger,
      blobs: deps.blobs,
      clock: deps.clock,
      transportFor: (s) => this.transports.forService(s),
      renew: async (m) => (await this.leases.renew([m])).has(m.id),
    };
    this.deliverDeps = {
      store: deps.store,
      logger: deps.logger,
      outcomes: this.outcomes,
      attemptDeps: this.attemptDeps,
      sandbox: createSandbox({
        ...deps,
        simulatorDelayMs: deps.testMode?.simulatorDelayMs ?? 60_000,
        compose: deps.testMode?.compose,
      }),
      transportFor: (s) => this.transports.forService(s),
    };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
    this.leases.startHeartbeat();
    this.reaper.start();
  }

  /** A send was just accepted in this process: look at the queue now instead of after pollMs. */
  nudge(): void {
    this.wake?.();
  }

  /**
   * Graceful stop: no new claims, no reaper timers; sends (and a reap or housekeeping) under way
   * get `graceMs` to finish, then what is still claimed goes back untouched; transports close.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.running = false;
    this.leases.stopHeartbeat();
    const reaper = this.reaper.stop();
    this.wake?.();
    let timer: NodeJS.Timeout | undefined;
    // A synthetic probe still under way (probe.ts) gets the same grace: after it, the breakers'
    // store may be closed under it.
    await Promise.race([
      Promise.all([this.loop, reaper, this.attemptDeps.prober?.settled()]),
      new Promise((r) => {
        timer = setTimeout(r, graceMs);
      }),
    ]);
    clearTimeout(timer);
    // Writes still waiting for the storage give up: their messages' leases expire as before.
    this.writes.stop();
    await this.outcomes.drain();
    await this.leases.giveUpAll('worker_stopped');
    await this.transports.close();
    await this.deliverDeps.sandbox.close();
  }

  /** One round: reap and housekeep if due, claim a batch, deliver it; how many it handled. */
  async runOnce(): Promise<number> {
    await this.reaper.runDue();
    const batch = await this.leases.claim(this.options.batchSize);
    const context = await this.contextOrGiveBack(batch);
    await Promise.all(batch.map((m) => this.dispatch(m, context)));
    await this.outcomes.drain();
    await this.simulator.runDue(this.deps.clock.now());
    return batch.length;
  }

  /** Housekeeping now (src/delivery/housekeeping.ts); tests call it directly. */
  maintain(now: number): Promise<void> {
    return this.reaper.maintain(now);
  }

  /**
   * The batch's context; if it cannot be read (the database failed for a moment), the batch goes
   * back to the queue and the error is rethrown. Kept claimed, the heartbeat would renew those
   * leases for as long as this worker lives: `sending` forever, with nobody sending them.
   */
  private async contextOrGiveBack(batch: readonly ClaimedMessage[]): Promise<BatchContext> {
    try {
      return await readBatchContext(this.deps.store, batch);
    } catch (err) {
      await this.leases.giveBack(batch, 'context_unavailable');
      throw err;
    }
  }

  private dispatch(m: ClaimedMessage, context: BatchContext): Promise<void> {
    return this.deliver(m, context)
      .catch(async (err: unknown) => {
        if (await this.leases.releaseOnStorageTrouble(m, err)) return;
        this.deps.logger.error(
          { err, message_id: m.id, org_id: m.org_id, service_id: m.service_id },
          'delivery failed unexpectedly; the lease will expire and the reaper requeue (or, out of attempts, fail) it',
        );
      })
      .finally(() => void this.leases.letGo(m));
  }

  /**
   * Keeps up to `batchSize` sends in flight and claims more as soon as half of them are done,
   * so the transport never idles at a batch boundary waiting for the slowest send.
   */
  private async run(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    // One waiter woken when any send settles. Promise.race over the in-flight set attached a
    // reaction to each of up to 50 sends on every round, so each send collected dozens of
    // them (~30 µs a message at 1,500 msg/s).
    let settled: (() => void) | undefined;
    const nextSettled = () =>
      new Promise<void>((resolve) => {
        settled = resolve;
      });
    while (this.running) {
      let claimed = 0;
      let pauseMs: number | undefined;
      if (inFlight.size <= this.options.batchSize / 2) {
        let batch: ClaimedMessage[] = [];
        try {
          batch = await this.leases.claim(this.options.batchSize - inFlight.size);
          const context = await this.contextOrGiveBack(batch);
          this.pause.succeeded();
          claimed = batch.length;
          for (const m of batch) {
            const p: Promise<void> = this.dispatch(m, context).finally(() => {
              inFlight.delete(p);
              settled?.();
            });
            inFlight.add(p);
          }
        } catch (err) {
          // With a batch claimed, it was its context that failed: the batch went back to the queue.
          // `claimed` stays 0, so the loop waits pollMs before trying again; while the storage is
          // unavailable, longer each time (ClaimPause), with one log line for the whole pause.
          const released = batch.length > 0 ? { messages: batch.length, released: true } : {};
          pauseMs = this.pause.failed(err, released);
          if (pauseMs === undefined) this.deps.logger.error({ err, ...released }, 'claiming failed');
        }
      }
      // Simulator events due (an index probe of a table empty without test traffic), after the
      // claim so a failure never holds deliveries back; the storage away, it pauses with the claims.
      pauseMs ??= await this.simulatorRound();
      if (!this.running) break;
      if (inFlight.size > this.options.batchSize / 2) {
        await nextSettled();
      } else if (claimed === 0) {
        // Nothing new to claim: wait for a send to finish, a nudge, or the poll interval.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pauseMs ?? this.options.pollMs);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
          if (inFlight.size > 0) void nextSettled().then(() => this.wake?.());
        });
        this.wake = undefined;
      }
      settled = undefined;
    }
    await Promise.all(inFlight);
  }

  /** The simulator's due events; on failure, the pause before the next claim (storage trouble) or undefined. */
  private async simulatorRound(): Promise<number | undefined> {
    try {
      await this.simulator.runDue(this.deps.clock.now());
      return undefined;
    } catch (err) {
      const pauseMs = this.pause.failed(err);
      if (pauseMs === undefined) this.deps.logger.error({ err }, 'recording simulator events failed');
      return pauseMs;
    }
  }

  private deliver(m: ClaimedMessage, context: BatchContext): Promise<void> {
    return deliverClaimed(this.deliverDeps, m, context);
  }
}
