import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalBreakers, PROBE_WAIT_MS, type Breakers } from '../../src/delivery/breaker.js';
import { RedisBreakers } from '../../src/delivery/breaker-redis.js';
import { ManualClock } from '../../src/domain/clock.js';
import { closerPerTest } from '../support/cleanup.js';
import { insertQueued, row } from '../support/delivery.js';
import { deliveriesPerMessage, failoverSetup, takeDown } from '../support/failover.js';
import { REDIS_URL, redisAvailable } from '../support/redis.js';
import { describeDialects } from '../support/dialects.js';

const redisUp = await redisAvailable();
const uniquePrefix = () => `test-breaker-${process.pid}-${Math.random().toString(36).slice(2)}:`;

const PASS = { kind: 'pass' } as const;
const K = 'acme/primary';

/** The same behaviour, whichever implementation: `make` gives breakers over one clock (two for Redis: two workers). */
function behaviour(name: string, make: (clock: ManualClock) => Promise<[Breakers, Breakers]>, skip = false) {
  describe.skipIf(skip)(`${name}: the rules`, () => {
    it('opens after 5 transient failures within 60 s; failures further apart, or a success between, do not', async () => {
      const clock = new ManualClock();
      const [a, b] = await make(clock);
      for (let i = 0; i < 4; i++) await a.failed(K, PASS, 'HTTP 503');
      clock.advance(61_000); // the first four are out of the window
      await b.failed(K, PASS, 'HTTP 503');
      expect((await a.view(K)).state).toBe('closed');
      for (let i = 0; i < 3; i++) await b.failed(K, PASS, 'HTTP 503');
      await a.succeeded(K, PASS);
      clock.advance(1_000); // past a worker's one-second read of a closed breaker
      await b.failed(K, PASS, 'HTTP 503');
      expect(await b.view(K)).toMatchObject({ state: 'closed', consecutiveFailures: 1 });
      for (let i = 0; i < 4; i++) await a.failed(K, PASS, `HTTP 503 #${i}`);
      expect(await b.view(K)).toEqual({ state: 'open', openedAt: clock.now(), consecutiveFailures: 5, lastError: 'HTTP 503 #3' });
      expect(await b.admit(K)).toEqual({ kind: 'refuse', retryAt: clock.now() + 30_000 });
      expect((await a.snapshot()).find((r) => r.key === K)?.state).toBe('open');
    });

    it('half-open after 30 s: one probe between two workers; its failure reopens, its success closes', async () => {
      const clock = new ManualClock();
      const [a, b] = await make(clock);
      for (let i = 0; i < 5; i++) await a.failed(K, PASS, 'connection refused');
      clock.advance(30_000);
      expect((await b.view(K)).state).toBe('half_open');
      const admitted = await Promise.all([a.admit(K), b.admit(K), a.admit(K), b.admit(K)]);
      expect(admitted.filter((x) => x.kind === 'probe')).toHaveLength(1);
      expect(
        admitted
          .filter((x) => x.kind === 'refuse')
          .every((x) => x.kind === 'refuse' && x.retryAt === clock.now() + PROBE_WAIT_MS),
      ).toBe(true);
      const probe = admitted.find((x) => x.kind === 'probe')!;
      // A send admitted before it opened succeeding proves nothing: still half-open.
      await b.succeeded(K, PASS);
      expect((await a.view(K)).state).toBe('half_open');
      await a.failed(K, probe, 'still refused');
      expect(await b.view(K)).toMatchObject({ state: 'open', openedAt: clock.now() });

      clock.advance(30_000);
      const again = await b.admit(K);
      expect(again.kind).toBe('probe');
      await b.succeeded(K, again);
      expect(await a.view(K)).toEqual({ state: 'closed', consecutiveFailures: 0 });
      clock.advance(1_000);
      expect(await a.admit(K)).toEqual(PASS);
    });

    it('a message whose probe failed is told so (again) at its next probe, once; others are not', async () => {
      const clock = new ManualClock();
      const [a, b] = await make(clock);
      for (let i = 0; i < 5; i++) await a.failed(K, PASS, 'connection refused');
      clock.advance(30_000);
      const first = await a.admit(K, 'msg_lone');
      expect(first).toMatchObject({ kind: 'probe', messageId: 'msg_lone' });
      expect(first).not.toHaveProperty('again');
      await a.failed(K, first, 'connection refused');
      clock.advance(30_000);
      // The other worker sees it: the lone message is told, and the probe it was given released.
      const second = await b.admit(K, 'msg_lone');
      expect(second).toMatchObject({ kind: 'probe', messageId: 'msg_lone', again: true });
      await b.abandon(K, second);
      const other = await a.admit(K, 'msg_other');
      expect(other).toMatchObject({ kind: 'probe', messageId: 'msg_other' });
      expect(other).not.toHaveProperty('again');
      await a.abandon(K, other);
      // Told once: asking again in the same attempt (nothing else took it) it is the probe.
      expect(await b.admit(K, 'msg_lone')).not.toHaveProperty('again');
    });

    it('closed by a synthetic probe: on probation, a transient failure reopens it at once, a success ends it', async () => {
      const clock = new ManualClock();
      const [a, b] = await make(clock);
      for (let i = 0; i < 5; i++) await a.failed(K, PASS, 'connection refused');
      clock.advance(30_000);
      const check = await a.admit(K);
      if (check.kind !== 'probe') throw new Error(`not the probe: ${check.kind}`);
      await a.succeeded(K, { ...check, synthetic: true });
      expect((await b.view(K)).state).toBe('closed');
      expect(await b.admit(K)).toEqual(PASS);
      await b.failed(K, PASS, '421 not now');
      expect(await a.view(K)).toMatchObject({ state: 'open', openedAt: clock.now() });

      clock.advance(30_000);
      const again = await b.admit(K);
      if (again.kind !== 'probe') throw new Error(`not the probe: ${again.kind}`);
      await b.succeeded(K, { ...again, synthetic: true });
      clock.advance(1_000);
      expect(await a.admit(K)).toEqual(PASS);
      await a.succeeded(K, PASS);
      clock.advance(1_000);
      // Probation over: one failure is one of a run of five again.
      await b.failed(K, PASS, '421 not now');
      expect(await a.view(K)).toMatchObject({ state: 'closed', consecutiveFailures: 1 });
    });

    it('a probe that never reports is forgotten after 2 minutes; an abandoned one at once', async () => {
      const clock = new ManualClock();
      const [a, b] = await make(clock);
      for (let i = 0; i < 5; i++) await a.failed(K, PASS, 'timeout');
      clock.advance(30_000);
      const lost = await a.admit(K);
      expect(lost.kind).toBe('probe');
      clock.advance(119_000);
      expect((await b.admit(K)).kind).toBe('refuse');
      clock.advance(1_000);
      const next = await b.admit(K);
      expect(next.kind).toBe('probe');
      await b.abandon(K, next);
      expect((await a.admit(K)).kind).toBe('probe');
    });
  });
}

behaviour('LocalBreakers', async (clock) => {
  const one = new LocalBreakers(clock);
  return [one, one];
});

const clients: Redis[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.quit().catch(() => undefined)));
});
const redisPair = (clock: ManualClock, prefix = uniquePrefix()): [RedisBreakers, RedisBreakers] => {
  const a = new Redis(REDIS_URL);
  const b = new Redis(REDIS_URL);
  clients.push(a, b);
  return [new RedisBreakers(a, clock, { prefix }), new RedisBreakers(b, clock, { prefix })];
};
behaviour('RedisBreakers (two workers, one Redis)', async (clock) => redisPair(clock), !redisUp);

describeDialects('two workers sharing a breaker through Redis on %s', (dialect, pgSkip) => {
  const skip = pgSkip || !redisUp;
  const closer = closerPerTest();

  it.skipIf(skip)("one worker's failures open it; the other fails over at once and shows it open", async () => {
    const prefix = uniquePrefix();
    const s = await failoverSetup(dialect, closer);
    const [first, second] = redisPair(s.clock, prefix);
    const workerA = s.worker({ breakers: first });
    const workerB = s.worker({ breakers: second });
    takeDown(s.primary);
    const ids = await insertQueued(s.store, 5, s.clock.now(), 'primary');
    expect(await workerA.runOnce()).toBe(5);
    s.clock.advance(10_000);
    const connections = s.primary.connections;
    expect(await workerB.runOnce()).toBe(5);
    expect(s.primary.connections).toBe(connections);
    for (const id of ids) expect((await row(s.store, id)).status).toBe('sent');
    expect([...deliveriesPerMessage(s.primary, s.backup).values()]).toEqual([1, 1, 1, 1, 1]);
    expect(await second.view('acme/primary')).toMatchObject({ state: 'open', consecutiveFailures: 5 });
  });
});
