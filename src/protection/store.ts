import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock } from '../domain/clock.js';
import type { RedisCircuit } from '../net/redis-circuit.js';

/**
 * One counter of a check. Keys carry their window (`…:<window index>`, computed from the
 * injected Clock), so a window never depends on when a key expires: the TTL only frees memory.
 * `limit: null` counts without limiting (the anomaly baseline).
 */
export interface Counter {
  key: string;
  limit: number | null;
  ttlMs: number;
}

/**
 * Where rate-limit state lives: this process's memory, or Redis so that every process of a
 * deployment shares it. Every operation is atomic in both.
 */
export interface LimiterStore {
  /**
   * All or nothing: when every limited counter is below its limit, adds one to each counter and
   * returns -1; otherwise changes nothing and returns the index of the first full counter. A
   * refused request therefore uses up no other limit (a flood from one address refused by its
   * own limit does not eat the organization's plan limit).
   */
  consume(counters: readonly Counter[]): Promise<number>;
  /** Takes one back from each key (a refund for a send that failed after counting). */
  release(keys: readonly string[]): Promise<void>;
  /** Adds one to `key`; returns its new value and the values of `read` (0 when absent). */
  incrAndRead(key: string, ttlMs: number, read: readonly string[]): Promise<{ count: number; values: number[] }>;
  /** Raises `key` to `value` (never lowers it), with a TTL. */
  setMax(key: string, value: number, ttlMs: number): Promise<void>;
  /** SET if absent: true when this call created the key (a single-use claim). */
  claim(key: string, ttlMs: number): Promise<boolean>;
  /** Drops a claim (the verifier was unreachable: the token was never really used). */
  unclaim(key: string): Promise<void>;
}

interface Entry {
  value: number;
  expiresAt: number;
}

/** One process. Expiry follows the injected Clock, so tests move windows without sleeping. */
export class MemoryLimiterStore implements LimiterStore {
  private readonly entries = new Map<string, Entry>();
  private nextSweep = 0;

  constructor(private readonly clock: Clock) {}

  private live(key: string, now: number): Entry | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  /** Expired windows are dropped at most once a second, in one pass. */
  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + 1000;
    for (const [key, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(key);
  }

  private add(key: string, by: number, ttlMs: number, now: number): number {
    const e = this.live(key, now);
    if (e === undefined) {
      this.entries.set(key, { value: by, expiresAt: now + ttlMs });
      return by;
    }
    e.value += by;
    return e.value;
  }

  async consume(counters: readonly Counter[]): Promise<number> {
    const now = this.clock.now();
    this.sweep(now);
    for (let i = 0; i < counters.length; i++) {
      const c = counters[i] as Counter;
      if (c.limit !== null && (this.live(c.key, now)?.value ?? 0) >= c.limit) return i;
    }
    for (const c of counters) this.add(c.key, 1, c.ttlMs, now);
    return -1;
  }

  async release(keys: readonly string[]): Promise<void> {
    const now = this.clock.now();
    for (const key of keys) {
      const e = this.live(key, now);
      if (e !== undefined && e.value > 0) e.value -= 1;
    }
  }

  async incrAndRead(key: string, ttlMs: number, read: readonly string[]): Promise<{ count: number; values: number[] }> {
    const now = this.clock.now();
    this.sweep(now);
    const count = this.add(key, 1, ttlMs, now);
    return { count, values: read.map((k) => this.live(k, now)?.value ?? 0) };
  }

  async setMax(key: string, value: number, ttlMs: number): Promise<void> {
    const now = this.clock.now();
    const e = this.live(key, now);
    if (e === undefined || e.value < value) this.entries.set(key, { value, expiresAt: now + ttlMs });
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const now = this.clock.now();
    this.sweep(now);
    if (this.live(key, now) !== undefined) return false;
    this.entries.set(key, { value: 1, expiresAt: now + ttlMs });
    return true;
  }

  async unclaim(key: string): Promise<void> {
    this.entries.delete(key);
  }
}

// KEYS: the counters; ARGV: limit (-1: none) and TTL in ms for each. Returns 0 when counted,
// else the 1-based index of the first full counter.
const CONSUME = `
for i = 1, #KEYS do
  local limit = tonumber(ARGV[2 * i - 1])
  if limit >= 0 then
    local current = tonumber(redis.call('GET', KEYS[i]) or '0')
    if current >= limit then return i end
  end
end
for i = 1, #KEYS do
  if redis.call('INCR', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[2 * i]) end
end
return 0`;

// KEYS[1]: decremented only while above zero.
const RELEASE = `
for i = 1, #KEYS do
  local current = tonumber(redis.call('GET', KEYS[i]) or '0')
  if current > 0 then redis.call('DECR', KEYS[i]) end
end
return 0`;

// KEYS[1]: incremented (TTL ARGV[1] when new); KEYS[2..]: read.
const INCR_AND_READ = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local out = { count }
for i = 2, #KEYS do out[i] = tonumber(redis.call('GET', KEYS[i]) or '0') end
return out`;

const SET_MAX = `
local current = tonumber(redis.call('GET', KEYS[1]) or '-1')
if tonumber(ARGV[1]) > current then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 0`;

/**
 * Counters live at least a minute in Redis. The window a request counts in is chosen by the
 * clock of the process that counts, but Redis expires keys on its own clock: with a 2 s TTL for
 * a 1 s window, processes whose clocks differ by 2 s (or a test clock standing still while a
 * loaded machine takes 2 s for three requests) found the counter gone and counted from zero.
 * A minute costs at most 60 small keys per active 1-second limit. Memory counters share the
 * process's clock and keep their own TTL.
 */
const MIN_COUNTER_TTL_MS = 60_000;

interface Script {
  source: string;
  sha: string;
}

const script = (source: string): Script => ({ source, sha: createHash('sha1').update(source).digest('hex') });
const SCRIPTS = {
  consume: script(CONSUME),
  release: script(RELEASE),
  incrAndRead: script(INCR_AND_READ),
  setMax: script(SET_MAX),
};

/**
 * Shared by every process of a deployment. Each operation is one Lua script (one round trip,
 * atomic); scripts run by SHA and are loaded on first use. With a circuit (the process's, in
 * front of its Redis connection), an operation fails at once, untried, while Redis is down.
 */
export class RedisLimiterStore implements LimiterStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'mailroom:',
    private readonly circuit?: RedisCircuit,
  ) {}

  private command<T>(fn: () => Promise<T>): Promise<T> {
    return this.circuit === undefined ? fn() : this.circuit.run(fn);
  }

  private run(s: Script, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown> {
    const full = keys.map((k) => this.prefix + k);
    return this.command(async () => {
      try {
        return await this.redis.evalsha(s.sha, full.length, ...full, ...args);
      } catch (err) {
        if (!(err instanceof Error) || !err.message.includes('NOSCRIPT')) throw err;
        return this.redis.eval(s.source, full.length, ...full, ...args);
      }
    });
  }

  async consume(counters: readonly Counter[]): Promise<number> {
    const args = counters.flatMap((c) => [c.limit ?? -1, Math.max(MIN_COUNTER_TTL_MS, Math.ceil(c.ttlMs))]);
    const refused = Number(
      await this.run(
        SCRIPTS.consume,
        counters.map((c) => c.key),
        args,
      ),
    );
    return refused === 0 ? -1 : refused - 1;
  }

  async release(keys: readonly string[]): Promise<void> {
    if (keys.length > 0) await this.run(SCRIPTS.release, keys, []);
  }

  async incrAndRead(key: string, ttlMs: number, read: readonly string[]): Promise<{ count: number; values: number[] }> {
    const out = (await this.run(SCRIPTS.incrAndRead, [key, ...read], [Math.max(1, Math.ceil(ttlMs))])) as unknown[];
    const numbers = out.map((v) => Number(v ?? 0));
    return { count: numbers[0] ?? 0, values: read.map((_, i) => numbers[i + 1] ?? 0) };
  }

  async setMax(key: string, value: number, ttlMs: number): Promise<void> {
    await this.run(SCRIPTS.setMax, [key], [value, Math.max(1, Math.ceil(ttlMs))]);
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const ok = await this.command(() => this.redis.set(this.prefix + key, '1', 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX'));
    return ok === 'OK';
  }

  async unclaim(key: string): Promise<void> {
    await this.command(() => this.redis.del(this.prefix + key));
  }
}
