import type { Redis } from 'ioredis';
import type { Clock } from '../domain/clock.js';
import type { RedisCircuit } from '../net/redis-circuit.js';
import {
  DEFAULT_BREAKER,
  newProbeToken,
  PROBE_WAIT_MS,
  PROBED_KEPT,
  type Admission,
  type BreakerOptions,
  type Breakers,
  type BreakerState,
  type BreakerTransition,
  type BreakerView,
} from './breaker.js';

/**
 * The breakers of every worker sharing MAILROOM_REDIS_URL (the rules: breaker.ts). One hash per
 * service, `<prefix>breaker:<org>/<service>`: `run` (failure times of the current run,
 * comma-separated), `consecutive`, `opened_at`, `last_error`, `probe` and `probe_until`,
 * `probed` (messages whose probe failed, comma-separated) and `probation` (closed by a
 * synthetic probe: the next transient failure opens it at once). Each
 * change is one Lua script, so two workers never both take the probe and no failure is lost.
 * Times are the workers' clocks (ms), as in the pacer. A closed breaker with no failures has
 * no hash at all.
 *
 * A worker reads a closed breaker at most once a second per service (CLOSED_CACHE_MS) and
 * reports a success only when that read saw failures: a healthy service costs no Redis round
 * trip per message. So another worker's opening reaches this one within a second, during which
 * it may still send a few messages the old way; each is an ordinary attempt.
 *
 * With the process's Redis circuit (`circuit`), every call fails at once, untried, while Redis
 * is down, and waits at most its timeout otherwise: the worker then sends as if closed.
 */

const CLOSED_CACHE_MS = 1_000;

// ARGV: now, halfOpenAfterMs, token, probeTtlMs, probeWaitMs, messageId ('' for none) →
// {0, failing} pass, {1, retryAt} refuse, {2, again} probe (again: 1 when the message's last probe failed).
const ADMIT = `
local h = KEYS[1]
local now = tonumber(ARGV[1])
local opened = redis.call('HGET', h, 'opened_at')
if not opened then
  if redis.call('HEXISTS', h, 'run') == 1 or redis.call('HEXISTS', h, 'probation') == 1 then return {0, 1} end
  return {0, 0}
end
opened = tonumber(opened)
if now < opened + tonumber(ARGV[2]) then return {1, opened + tonumber(ARGV[2])} end
local untilAt = tonumber(redis.call('HGET', h, 'probe_until') or '0')
if untilAt > now then return {1, now + tonumber(ARGV[5])} end
redis.call('HSET', h, 'probe', ARGV[3], 'probe_until', now + tonumber(ARGV[4]))
local again = 0
local probed = redis.call('HGET', h, 'probed')
if ARGV[6] ~= '' and probed then
  local kept = {}
  for id in string.gmatch(probed, '[^,]+') do
    if id == ARGV[6] then again = 1 else table.insert(kept, id) end
  end
  if again == 1 then redis.call('HSET', h, 'probed', table.concat(kept, ',')) end
end
return {2, again}`;

// ARGV: now, windowMs, failures, token ('' when not a probe), reason, the probe's message ('' for
// none), probedKept → 1 when it opened the breaker.
const FAIL = `
local h = KEYS[1]
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[3])
redis.call('HSET', h, 'last_error', ARGV[5])
redis.call('HINCRBY', h, 'consecutive', 1)
-- A service deleted while failing leaves no hash behind for ever: a day without news ends it.
redis.call('PEXPIRE', h, 86400000)
if redis.call('HEXISTS', h, 'opened_at') == 1 then
  if ARGV[4] ~= '' and redis.call('HGET', h, 'probe') == ARGV[4] then
    redis.call('HSET', h, 'opened_at', now)
    redis.call('HDEL', h, 'probe', 'probe_until')
    if ARGV[6] ~= '' then
      local ids = {}
      for id in string.gmatch(redis.call('HGET', h, 'probed') or '', '[^,]+') do table.insert(ids, id) end
      table.insert(ids, ARGV[6])
      while #ids > tonumber(ARGV[7]) do table.remove(ids, 1) end
      redis.call('HSET', h, 'probed', table.concat(ids, ','))
    end
  end
  return 0
end
if redis.call('HEXISTS', h, 'probation') == 1 then
  redis.call('HDEL', h, 'probation', 'run')
  redis.call('HSET', h, 'opened_at', now)
  return 1
end
local run = {}
local stored = redis.call('HGET', h, 'run')
if stored then
  for t in string.gmatch(stored, '[^,]+') do
    local v = tonumber(t)
    if v > now - tonumber(ARGV[2]) then table.insert(run, t) end
  end
end
table.insert(run, ARGV[1])
while #run > n do table.remove(run, 1) end
if #run >= n then
  redis.call('HSET', h, 'opened_at', now)
  redis.call('HDEL', h, 'run')
  return 1
end
redis.call('HSET', h, 'run', table.concat(run, ','))
return 0`;

// ARGV: token ('' when not a probe), '1' when a synthetic probe → 1 when the breaker was reset
// (closed), 2 when that reset closed an open one (the transition alerts are told of, once).
const SUCCEED = `
local h = KEYS[1]
local opened = redis.call('HEXISTS', h, 'opened_at') == 1
if opened and (ARGV[1] == '' or redis.call('HGET', h, 'probe') ~= ARGV[1]) then return 0 end
redis.call('DEL', h)
if opened and ARGV[2] == '1' then
  redis.call('HSET', h, 'probation', '1')
  redis.call('PEXPIRE', h, 86400000)
end
if opened then return 2 end
return 1`;

// ARGV: token → releases the probe it names.
const ABANDON = `
if redis.call('HGET', KEYS[1], 'probe') == ARGV[1] then redis.call('HDEL', KEYS[1], 'probe', 'probe_until') end
return 0`;

export class RedisBreakers implements Breakers {
  private readonly options: BreakerOptions;
  private readonly prefix: string;
  /** Closed breakers as last read: when, and whether a run of failures had begun. */
  private readonly closed = new Map<string, { readAt: number; failing: boolean }>();
  /** Every key this process has used, for /metrics. */
  private readonly known = new Set<string>();
  private readonly circuit: RedisCircuit | undefined;
  /** Told of each transition, by the worker whose script made it (buildServices sets it: alerts). */
  onTransition: BreakerTransition | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly clock: Clock,
    options: Partial<BreakerOptions> & { prefix?: string; circuit?: RedisCircuit | undefined } = {},
  ) {
    const { prefix, circuit, ...rest } = options;
    this.options = { ...DEFAULT_BREAKER, ...rest };
    this.prefix = `${prefix ?? 'mailroom:'}breaker:`;
    this.circuit = circuit;
  }

  private command<T>(fn: () => Promise<T>): Promise<T> {
    return this.circuit === undefined ? fn() : this.circuit.run(fn);
  }

  async admit(key: string, messageId?: string): Promise<Admission> {
    this.known.add(key);
    const now = this.clock.now();
    const cached = this.closed.get(key);
    if (cached !== undefined && now - cached.readAt < CLOSED_CACHE_MS) return { kind: 'pass' };
    const token = newProbeToken();
    const o = this.options;
    const reply = await this.command(() =>
      this.redis.eval(ADMIT, 1, this.prefix + key, now, o.halfOpenAfterMs, token, o.probeTtlMs, PROBE_WAIT_MS, messageId ?? ''),
    );
    const [code, value] = Array.isArray(reply) ? reply.map(Number) : [0, 0];
    if (code === 2)
      return messageId === undefined
        ? { kind: 'probe', token }
        : { kind: 'probe', token, messageId, ...(value === 1 ? { again: true } : {}) };
    if (code === 1) return { kind: 'refuse', retryAt: value ?? now + PROBE_WAIT_MS };
    this.closed.set(key, { readAt: now, failing: value === 1 });
    return { kind: 'pass' };
  }

  async succeeded(key: string, admission: Admission): Promise<void> {
    const cached = this.closed.get(key);
    if (admission.kind !== 'probe' && cached !== undefined && !cached.failing) return;
    const synthetic = admission.kind === 'probe' && admission.synthetic === true;
    const reset = await this.command(() =>
      this.redis.eval(SUCCEED, 1, this.prefix + key, admission.kind === 'probe' ? admission.token : '', synthetic ? '1' : ''),
    );
    // On probation, the next message's answer must reach Redis (it ends the probation or reopens).
    this.closed.set(key, { readAt: this.clock.now(), failing: synthetic && Number(reset) >= 1 });
    if (Number(reset) === 2) this.onTransition?.(key, 'closed', undefined);
  }

  async failed(key: string, admission: Admission, reason: string): Promise<void> {
    const o = this.options;
    this.closed.delete(key);
    const probe = admission.kind === 'probe' ? admission : undefined;
    const opened = await this.command(() =>
      this.redis.eval(
        FAIL,
        1,
        this.prefix + key,
        this.clock.now(),
        o.windowMs,
        o.failures,
        probe?.token ?? '',
        reason.slice(0, 500),
        probe?.messageId ?? '',
        PROBED_KEPT,
      ),
    );
    if (Number(opened) === 1) this.onTransition?.(key, 'open', reason.slice(0, 500));
  }

  async abandon(key: string, admission: Admission): Promise<void> {
    if (admission.kind === 'probe') await this.command(() => this.redis.eval(ABANDON, 1, this.prefix + key, admission.token));
  }

  async view(key: string): Promise<BreakerView> {
    const h = await this.command(() => this.redis.hgetall(this.prefix + key));
    const openedAt = h.opened_at === undefined ? undefined : Number(h.opened_at);
    const state: BreakerState =
      openedAt === undefined ? 'closed' : this.clock.now() >= openedAt + this.options.halfOpenAfterMs ? 'half_open' : 'open';
    return {
      state,
      ...(openedAt !== undefined ? { openedAt } : {}),
      consecutiveFailures: Number(h.consecutive ?? 0),
      ...(h.last_error !== undefined ? { lastError: h.last_error } : {}),
    };
  }

  /** The keys this process used, and every shared breaker that has a hash (SCAN: services are few). */
  async snapshot(): Promise<Array<{ key: string; state: BreakerState }>> {
    const keys = new Set(this.known);
    let cursor = '0';
    do {
      const [next, found] = await this.command(() => this.redis.scan(cursor, 'MATCH', `${this.prefix}*`, 'COUNT', 200));
      cursor = next;
      for (const k of found) keys.add(k.slice(this.prefix.length));
    } while (cursor !== '0');
    return Promise.all([...keys].map(async (key) => ({ key, state: (await this.view(key)).state })));
  }
}
