import type { BlobStore } from '../blobs/blob-store.js';
import type { Clock } from '../domain/clock.js';
import type { Metrics } from '../observability/metrics.js';
import type { ReapResult } from '../storage/queue-types.js';
import type { Store } from '../storage/store.js';
import { housekeeping } from './housekeeping.js';
import { logStorageAware } from './leases.js';
import { DEFAULT_RETRY, reapGiveUpReason, type RetryPolicy } from './retry.js';

export interface ReaperDeps {
  store: Store;
  clock: Clock;
  metrics: Metrics;
  logger: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  retry?: RetryPolicy;
  blobs?: BlobStore;
  retentionDays?: number;
  /** The request log's retention (MAILROOM_REQUEST_LOG_DAYS); absent: kept. */
  requestLogDays?: number;
  /** Test-mode messages' retention (MAILROOM_TEST_RETENTION_DAYS); absent: the live one. */
  testRetentionDays?: number;
}

export interface ReaperOptions {
  /** How often expired leases are taken back (real time, and by the clock for runDue). */
  reapEveryMs: number;
  /** How often housekeeping runs (retention, expired uploads and idempotency keys). */
  maintenanceEveryMs: number;
}

/** Housekeeping a minute apart: each run purges at most 500 messages and 500 uploads. */
export const MAINTENANCE_EVERY_MS = 60_000;

/** One job on a timer: never two runs at once (a slow database would pile them up). */
class Job {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  last = 0;

  constructor(
    private readonly work: () => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(everyMs: number): void {
    this.tick();
    this.timer = setInterval(() => this.tick(), everyMs);
    // The delivery loop keeps the process alive; a worker nobody stopped must not.
    this.timer.unref();
  }

  /** The timer stops; resolves when a run under way has ended (its failure was logged by tick). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** Runs now, or waits for the run under way; a failure rejects (runDue) as well as being logged by tick. */
  run(): Promise<void> {
    this.running ??= this.work().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private tick(): void {
    if (this.running === undefined) this.run().catch(this.onError);
  }
}

/**
 * Takes back the messages whose lease expired (a worker died or lost its database mid-attempt)
 * and does the housekeeping, each on a timer of its own, apart from the claim loop: a claim
 * never waits for a reap or a purge of 500 messages. Requeued messages are due now, so
 * `onRequeued` wakes the claim loop rather than leaving them for the next poll.
 */
export class Reaper {
  private readonly reaping: Job;
  private readonly maintenance: Job;

  constructor(
    private readonly deps: ReaperDeps,
    private readonly options: ReaperOptions,
    private readonly onRequeued: () => void = () => undefined,
  ) {
    this.reaping = new Job(
      () => this.reap(),
      (err) => logStorageAware(deps.logger, err, 'reaping expired leases failed'),
    );
    this.maintenance = new Job(
      () => this.maintain(deps.clock.now()),
      (err) => logStorageAware(deps.logger, err, 'maintenance failed'),
    );
  }

  /** Both run now, then on their own timers, until stop. */
  start(): void {
    this.reaping.start(this.options.reapEveryMs);
    this.maintenance.start(this.options.maintenanceEveryMs);
  }

  /** The timers stop; resolves when the runs under way have ended. */
  async stop(): Promise<void> {
    await Promise.all([this.reaping.stop(), this.maintenance.stop()]);
  }

  /**
   * What is due by the clock, now, for a worker driven round by round (runOnce) rather than
   * started: a failed reap rejects, a failed housekeeping is logged.
   */
  async runDue(): Promise<void> {
    const now = this.deps.clock.now();
    if (now - this.reaping.last >= this.options.reapEveryMs) await this.reaping.run();
    if (now - this.maintenance.last >= this.options.maintenanceEveryMs) {
      await this.maintenance.run().catch((err: unknown) => logStorageAware(this.deps.logger, err, 'maintenance failed'));
    }
  }

  /** Housekeeping (src/delivery/housekeeping.ts); tests call it directly. */
  maintain(now: number): Promise<void> {
    this.maintenance.last = now;
    return housekeeping(this.deps, now);
  }

  private async reap(): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.now();
    this.reaping.last = now;
    const policy = this.deps.retry ?? DEFAULT_RETRY;
    const reaped = await store.transaction((tx) =>
      tx.queue.reapExpired(now, (attempts, createdAt) => reapGiveUpReason(policy, attempts, createdAt, now)),
    );
    this.reaped(reaped);
  }

  private reaped(r: ReapResult): void {
    const { logger, metrics } = this.deps;
    if (r.requeued > 0) {
      logger.warn({ reaped: r.requeued }, 'expired leases returned to the queue');
      this.onRequeued();
    }
    for (const m of r.failed) {
      metrics.failed.inc({ service: m.service_id });
      logger.warn(
        { message_id: m.id, service_id: m.service_id, outcome: 'failed' },
        'expired lease: the message had no attempts or time left',
      );
    }
  }
}
