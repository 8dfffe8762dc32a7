import type { Redis } from 'ioredis';
import type { Clock } from '../domain/clock.js';
import type { RedisCircuit } from '../net/redis-circuit.js';

/**
 * Provider pacing (spec, Limits rule 6): a service's `max_per_second` delays messages, it never
 * refuses them. `acquire` resolves when this message may leave.
 *
 * Throttling (issue 14: a 429, SES `Throttling`): the worker calls `slowDown` and no message of
 * the service leaves before then, rate or no rate (`acquire` for a service with a rate,
 * `waitSlowDown` for one without). The throttled message itself is retried at its Retry-After
 * (Outcomes.failed); the pause is what the others of the service wait: the provider's
 * Retry-After when it gave one, else THROTTLE_PAUSE_MS, never more than MAX_THROTTLE_PAUSE_MS
 * (claimed messages wait in the worker holding their leases; a day's quota is the retry's
 * business, not the pacer's).
 */
export interface Pacer {
  acquire(serviceKey: string, perSecond: number): Promise<void>;
  /** No message of this service leaves before `untilMs` (all workers, through Redis when shared). */
  slowDown?(serviceKey: string, untilMs: number): Promise<void>;
  /** Waits out the service's slow-down, if any; true if it waited. */
  waitSlowDown?(serviceKey: string): Promise<boolean>;
}

/** The pause after a throttling answer that named no Retry-After (SES sends none). */
export const THROTTLE_PAUSE_MS = 2_000;
export const MAX_THROTTLE_PAUSE_MS = 30_000;

/** How long the service's pacing pauses after a throttling answer that asked for `retryAfterMs`. */
export function throttlePause(retryAfterMs: number | undefined): number {
  return Math.min(MAX_THROTTLE_PAUSE_MS, Math.max(1, retryAfterMs ?? THROTTLE_PAUSE_MS));
}

export type Sleep = (ms: number) => Promise<void>;
export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One process: evenly spaced slots per service (1000/rate ms apart), handed out in order. */
export class LocalPacer implements Pacer {
  private readonly nextSlot = new Map<string, number>();
  private readonly slowUntil = new Map<string, number>();
  constructor(
    private readonly clock: Clock,
    private readonly sleep: Sleep = realSleep,
  ) {}

  async acquire(serviceKey: string, perSecond: number): Promise<void> {
    const now = this.clock.now();
    const slot = Math.max(now, this.nextSlot.get(serviceKey) ?? now, this.slowUntil.get(serviceKey) ?? now);
    this.nextSlot.set(serviceKey, slot + 1000 / perSecond);
    if (slot > now) await this.sleep(slot - now);
  }

  async slowDown(serviceKey: string, untilMs: number): Promise<void> {
    this.slowUntil.set(serviceKey, Math.max(untilMs, this.slowUntil.get(serviceKey) ?? 0));
  }

  async waitSlowDown(serviceKey: string): Promise<boolean> {
    const until = this.slowUntil.get(serviceKey);
    if (until === undefined) return false;
    const now = this.clock.now();
    if (until <= now) {
      this.slowUntil.delete(serviceKey);
      return false;
    }
    await this.sleep(until - now);
    return true;
  }
}

/** How long a worker trusts its last read of a service's shared slow-down (one GET a second at most). */
const SLOW_READ_EVERY_MS = 1_000;

/**
 * Many workers: a fixed one-second window per service in Redis, counted with INCR. A message
 * that finds its window full waits for the next window and tries again, so all workers
 * together send at most `perSecond` per second. A slow-down is the key
 * `mailroom:pace-slow:<service>` (its time, expiring with it), read at most once a second.
 *
 * Redis going away never holds mail back: every command runs through the process's Redis
 * circuit (src/net/redis-circuit.ts: no answer within its timeout is a failure, and while Redis
 * is down a command fails at once), and a pacing call whose command fails is paced by this
 * worker alone (LocalPacer) instead. With M workers, a service may then get up to M × its
 * rate until Redis is back; a provider that minds answers 429, which slowDown honours. Before,
 * an unanswered INCR had no timeout and a refused one failed the attempt (issue 25).
 */
export class RedisPacer implements Pacer {
  private readonly slowRead = new Map<string, { readAt: number; until: number }>();
  private readonly alone: LocalPacer;
  constructor(
    private readonly redis: Redis,
    private readonly clock: Clock,
    private readonly sleep: Sleep = realSleep,
    private readonly prefix = 'mailroom:',
    private readonly circuit?: RedisCircuit,
  ) {
    this.alone = new LocalPacer(clock, sleep);
  }

  /** One Redis command, through the circuit when there is one. */
  private run<T>(command: () => Promise<T>): Promise<T> {
    return this.circuit === undefined ? command() : this.circuit.run(command);
  }

  async acquire(serviceKey: string, perSecond: number): Promise<void> {
    try {
      await this.acquireShared(serviceKey, perSecond);
    } catch {
      await this.alone.acquire(serviceKey, perSecond);
    }
  }

  private async acquireShared(serviceKey: string, perSecond: number): Promise<void> {
    await this.waitSlowDown(serviceKey);
    const limit = Math.max(1, Math.floor(perSecond));
    for (;;) {
      const now = this.clock.now();
      const window = Math.floor(now / 1000);
      const key = `${this.prefix}pace:${serviceKey}:${window}`;
      const count = await this.run(() => this.redis.incr(key));
      if (count === 1) await this.run(() => this.redis.pexpire(key, 2000));
      if (count <= limit) return;
      await this.sleep((window + 1) * 1000 - now);
    }
  }

  async slowDown(serviceKey: string, untilMs: number): Promise<void> {
    const now = this.clock.now();
    if (untilMs <= now) return;
    // This worker keeps it too, for while Redis cannot be read.
    await this.alone.slowDown(serviceKey, untilMs);
    // The later of the stored time and this one, expiring with it.
    await this.run(() =>
      this.redis.eval(
        "local c = tonumber(redis.call('GET', KEYS[1]) or '0') if " +
          "tonumber(ARGV[1]) > c then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end return 0",
        1,
        `${this.prefix}pace-slow:${serviceKey}`,
        untilMs,
        untilMs - now,
      ),
    );
    this.slowRead.set(serviceKey, { readAt: now, until: Math.max(untilMs, this.slowRead.get(serviceKey)?.until ?? 0) });
  }

  async waitSlowDown(serviceKey: string): Promise<boolean> {
    const now = this.clock.now();
    let read = this.slowRead.get(serviceKey);
    if (read === undefined || now - read.readAt >= SLOW_READ_EVERY_MS) {
      let stored: string | null;
      try {
        stored = await this.run(() => this.redis.get(`${this.prefix}pace-slow:${serviceKey}`));
      } catch {
        return this.alone.waitSlowDown(serviceKey);
      }
      read = { readAt: now, until: Number(stored ?? 0) };
      this.slowRead.set(serviceKey, read);
    }
    if (read.until <= now) return false;
    await this.sleep(read.until - now);
    return true;
  }
}
