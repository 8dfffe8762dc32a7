import type { Redis } from 'ioredis';
import type { Clock } from '../domain/clock.js';

/**
 * Provider pacing (spec, Limits rule 6): a service's `max_per_second` delays messages, it never
 * refuses them. `acquire` resolves when this message may leave.
 */
export interface Pacer {
  acquire(serviceKey: string, perSecond: number): Promise<void>;
}

export type Sleep = (ms: number) => Promise<void>;
export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One process: evenly spaced slots per service (1000/rate ms apart), handed out in order. */
export class LocalPacer implements Pacer {
  private readonly nextSlot = new Map<string, number>();
  constructor(private readonly clock: Clock, private readonly sleep: Sleep = realSleep) {}

  async acquire(serviceKey: string, perSecond: number): Promise<void> {
    const now = this.clock.now();
    const slot = Math.max(now, this.nextSlot.get(serviceKey) ?? now);
    this.nextSlot.set(serviceKey, slot + 1000 / perSecond);
    if (slot > now) await this.sleep(slot - now);
  }
}

/**
 * Many workers: a fixed one-second window per service in Redis, counted with INCR. A message
 * that finds its window full waits for the next window and tries again, so all workers
 * together send at most `perSecond` per second.
 */
export class RedisPacer implements Pacer {
  constructor(private readonly redis: Redis, private readonly clock: Clock, private readonly sleep: Sleep = realSleep) {}

  async acquire(serviceKey: string, perSecond: number): Promise<void> {
    const limit = Math.max(1, Math.floor(perSecond));
    for (;;) {
      const now = this.clock.now();
      const window = Math.floor(now / 1000);
      const key = `mailroom:pace:${serviceKey}:${window}`;
      const count = await this.redis.incr(key);
      if (count === 1) await this.redis.pexpire(key, 2000);
      if (count <= limit) return;
      await this.sleep((window + 1) * 1000 - now);
    }
  }
}
