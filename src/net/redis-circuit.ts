/**
 * Consecutive failures (an error or no answer within the timeout; not Redis's own error replies,
 * which come back at once) after which Redis is treated as down. Three: one lost connection
 * fails the commands in flight together, and a blip must not stop counting limits in Redis.
 */
export const FAILURES_TO_OPEN = 3;
/** How long Redis is first left alone; every probe that fails doubles it, up to MAX_OPEN_MS. */
export const FIRST_OPEN_MS = 1_000;
export const MAX_OPEN_MS = 30_000;
/** ±20 % of each interval, so that processes that lost Redis together do not probe it together. */
const JITTER = 0.2;

/** Thrown at once, without a round trip, while Redis is treated as down. */
export class RedisUnavailable extends Error {
  override readonly name = 'RedisUnavailable';
}

export type RedisHealthChange =
  | { state: 'down'; reason: string; failures: number; nextProbeMs: number }
  | { state: 'up'; downForMs: number; probes: number };

export interface RedisCircuitOptions {
  /** One round trip that tells Redis answers (PING), run by the background probe. */
  ping(): Promise<unknown>;
  /** The process's clock (domain/clock.ts; net/ imports nothing of the app's). */
  clock: { now(): number };
  /** A command or probe with no answer within this many ms counts as a failure. */
  timeoutMs: number;
  /** Told once when Redis is found down and once when it answers again. */
  onChange?: ((change: RedisHealthChange) => void) | undefined;
  /** The intervals (tests shorten them); defaults FIRST_OPEN_MS, MAX_OPEN_MS. */
  firstOpenMs?: number | undefined;
  maxOpenMs?: number | undefined;
  random?: (() => number) | undefined;
}

interface Open {
  since: number;
  intervalMs: number;
  probes: number;
  timer: NodeJS.Timeout | undefined;
}

/** Redis's own error replies (WRONGTYPE, NOSCRIPT, OOM, NOAUTH…): it answered, and at once. */
const isReply = (err: unknown): boolean => err instanceof Error && err.name === 'ReplyError';

/**
 * A circuit breaker in front of one Redis connection, shared by its users in a process (rate
 * limits, anomaly counters, CAPTCHA claims, the services' circuit breakers). Without it, every
 * rate-limit check waited the whole MAILROOM_RATE_LIMIT_TIMEOUT_MS while Redis was unreachable:
 * a private send took 1,007 ms instead of 79 (issue 25).
 *
 * After FAILURES_TO_OPEN consecutive failures, `run` throws RedisUnavailable at once, without
 * touching Redis, and one background probe (a PING with the same timeout) is made per interval:
 * 1 s, doubled by every failed probe up to 30 s, with jitter. The first answer, a probe's or a
 * command's that was still in flight, closes the circuit.
 */
export class RedisCircuit {
  private failures = 0;
  private open: Open | undefined;
  private stopped = false;
  private readonly firstOpenMs: number;
  private readonly maxOpenMs: number;

  constructor(private readonly options: RedisCircuitOptions) {
    this.firstOpenMs = options.firstOpenMs ?? FIRST_OPEN_MS;
    this.maxOpenMs = options.maxOpenMs ?? MAX_OPEN_MS;
  }

  /** False while Redis is treated as down (commands are not sent). */
  get available(): boolean {
    return this.open === undefined;
  }

  /** Runs one Redis command with the timeout, or refuses it at once while Redis is down. */
  async run<T>(command: () => Promise<T>): Promise<T> {
    if (this.open !== undefined) {
      throw new RedisUnavailable(
        `Redis treated as down since ${Math.round((this.options.clock.now() - this.open.since) / 1000)} ` +
          `s ago: not asked (a probe checks it in the background)`,
      );
    }
    try {
      const value = await this.withTimeout(command());
      this.answered();
      return value;
    } catch (err) {
      if (isReply(err)) this.answered();
      else this.failed(err);
      throw err;
    }
  }

  /** Stops probing (the process is closing). */
  stop(): void {
    this.stopped = true;
    if (this.open?.timer !== undefined) clearTimeout(this.open.timer);
  }

  private async withTimeout<T>(promise: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        promise,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`Redis did not answer within ${this.options.timeoutMs} ms`)),
            this.options.timeoutMs,
          );
        }),
      ]);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  private answered(): void {
    this.failures = 0;
    if (this.open !== undefined) this.close(this.open);
  }

  private failed(err: unknown): void {
    if (this.open !== undefined) return;
    this.failures += 1;
    if (this.failures < FAILURES_TO_OPEN) return;
    const open: Open = { since: this.options.clock.now(), intervalMs: this.firstOpenMs, probes: 0, timer: undefined };
    this.open = open;
    const nextProbeMs = this.schedule(open);
    this.options.onChange?.({
      state: 'down',
      reason: err instanceof Error ? err.message : String(err),
      failures: this.failures,
      nextProbeMs,
    });
  }

  /** Arms the next probe; returns its delay. */
  private schedule(open: Open): number {
    const random = this.options.random ?? Math.random;
    const delay = Math.round(open.intervalMs * (1 - JITTER + 2 * JITTER * random()));
    if (this.stopped) return delay;
    open.timer = setTimeout(() => void this.probe(open), delay);
    // A probe never keeps a process alive that has nothing else to do.
    open.timer.unref();
    return delay;
  }

  private async probe(open: Open): Promise<void> {
    open.timer = undefined;
    open.probes += 1;
    try {
      await this.withTimeout(this.options.ping());
    } catch (err) {
      if (!isReply(err)) {
        if (this.open === open) {
          open.intervalMs = Math.min(open.intervalMs * 2, this.maxOpenMs);
          this.schedule(open);
        }
        return;
      }
    }
    if (this.open === open) this.close(open);
  }

  private close(open: Open): void {
    if (open.timer !== undefined) clearTimeout(open.timer);
    this.open = undefined;
    this.failures = 0;
    this.options.onChange?.({ state: 'up', downForMs: this.options.clock.now() - open.since, probes: open.probes });
  }
}
