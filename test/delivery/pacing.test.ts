import net from 'node:net';
import { Redis } from 'ioredis';
import { RedisCircuit } from '../../src/net/redis-circuit.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { LocalPacer, RedisPacer, type Sleep } from '../../src/delivery/pacing.js';
import { deliveryHarness, newWorker, row, seedSmtpOrg, send, smtpService } from '../support/delivery.js';
import { startSink, waitFor } from '../support/smtp-sink.js';
import { tempDir } from '../support/cleanup.js';
import { REDIS_URL, redisAvailable } from '../support/redis.js';
import { describeDialects } from '../support/dialects.js';

const redisUp = await redisAvailable();

/**
 * Virtual time for pacers: `sleep` parks the caller until the test lets it go, moving the
 * ManualClock to the time it asked to wake at. Nothing waits on a real timer.
 */
class VirtualSleep {
  readonly sleepers: Array<{ at: number; wake: () => void }> = [];
  readonly requests: number[] = [];
  constructor(private readonly clock: ManualClock) {}
  readonly sleep: Sleep = (ms) => {
    this.requests.push(ms);
    return new Promise<void>((wake) => this.sleepers.push({ at: this.clock.now() + ms, wake }));
  };
  /** Moves the clock to the earliest wake-up time and wakes everyone due then. */
  wakeNext(): number {
    const at = Math.min(...this.sleepers.map((s) => s.at));
    this.clock.set(Math.max(this.clock.now(), at));
    const due = this.sleepers.filter((s) => s.at <= this.clock.now());
    for (const s of due) this.sleepers.splice(this.sleepers.indexOf(s), 1);
    for (const s of due) s.wake();
    return due.length;
  }
}

describeDialects('provider pacing through the worker on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)('max_per_second 5, 15 messages: sends ≥ 200 ms apart (virtual time), none refused', async () => {
    const t = await h.app();
    const sink = await startSink({ clock: t.clock }, h.closer);
    await seedSmtpOrg(t.store, smtpService(sink.port, { max_per_second: 5 }));
    // Acceptance never refuses for pacing: 15 sends in a burst are all 202.
    const ids: string[] = [];
    for (let i = 0; i < 15; i++) ids.push(await send(t));

    const virtual = new VirtualSleep(t.clock);
    const { worker } = newWorker(
      { store: t.store, clock: t.clock, dataDir: tempDir(h.closer), pacer: new LocalPacer(t.clock, virtual.sleep) },
      h.closer,
    );
    const start = t.clock.now();
    const round = worker.runOnce();
    // One message leaves per step: wake the next sleeper only once the previous one reached the sink.
    for (let k = 1; k < 15; k++) {
      await waitFor(() => sink.received.length >= k && virtual.sleepers.length > 0, 10_000, `message ${k} at the sink`);
      expect(sink.received).toHaveLength(k);
      virtual.wakeNext();
    }
    expect(await round).toBe(15);

    expect(sink.received).toHaveLength(15);
    expect(sink.dataAttempts).toHaveLength(15);
    const times = sink.received.map((r) => r.at);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(200);
    expect(times[0]).toBe(start);
    expect(times.at(-1)! - start).toBe(14 * 200);
    for (const id of ids) {
      const m = await row(t.store, id);
      expect(m.status).toBe('sent');
      expect(m.attempts).toBe(1);
    }
    expect(virtual.requests).toHaveLength(14);
  });
});

describe('pacers', () => {
  it('LocalPacer hands out evenly spaced slots per service, independent across services', async () => {
    const clock = new ManualClock();
    const slept: Array<{ key: string; ms: number }> = [];
    const pacer = new LocalPacer(clock, async (ms) => {
      slept.push({ key: 'x', ms });
    });
    await Promise.all([1, 2, 3, 4].map(() => pacer.acquire('a', 4)));
    expect(slept.map((s) => s.ms)).toEqual([250, 500, 750]);
    await pacer.acquire('b', 4); // another service: its own schedule, no wait
    expect(slept).toHaveLength(3);
    clock.advance(10_000); // long idle: no debt carried over
    await pacer.acquire('a', 4);
    expect(slept).toHaveLength(3);
  });

  describe.skipIf(!redisUp)('RedisPacer against real Redis', () => {
    const clients: Redis[] = [];
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((c) => c.quit().catch(() => undefined)));
    });

    it('two pacers sharing Redis grant at most N per one-second window together', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 0, 300));
      const virtual = new VirtualSleep(clock);
      const a = new Redis(REDIS_URL);
      const b = new Redis(REDIS_URL);
      clients.push(a, b);
      const pacers = [new RedisPacer(a, clock, virtual.sleep), new RedisPacer(b, clock, virtual.sleep)];
      const key = `test-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
      const N = 5;
      const total = 23;

      const grants: number[] = [];
      const all = Array.from({ length: total }, (_, i) =>
        pacers[i % 2]!.acquire(key, N).then(() => {
          grants.push(Math.floor(clock.now() / 1000));
        }),
      );
      for (let guard = 0; guard < 20; guard++) {
        // Quiet: every acquire has either been granted or is asleep until the next window.
        await waitFor(() => grants.length + virtual.sleepers.length === total, 10_000, 'the pacers to settle');
        if (virtual.sleepers.length === 0) break;
        virtual.wakeNext();
      }
      await Promise.all(all);

      expect(grants).toHaveLength(total);
      const perWindow = new Map<number, number>();
      for (const w of grants) perWindow.set(w, (perWindow.get(w) ?? 0) + 1);
      for (const n of perWindow.values()) expect(n).toBeLessThanOrEqual(N);
      // Waiting, not refusing: every window is used to the full until all are through.
      expect([...perWindow.values()]).toEqual([5, 5, 5, 5, 3]);
      const windows = [...perWindow.keys()];
      expect(windows).toEqual(windows.map((_, i) => windows[0]! + i));
      // A woken acquire waits exactly until the start of the next window.
      expect(new Set(virtual.requests)).toEqual(new Set([700, 1000]));
    });
  });
  describe('RedisPacer while Redis is away (issue 25)', () => {
    const closers: Array<() => Promise<unknown>> = [];
    afterEach(async () => {
      for (const close of closers.splice(0)) await close();
    });

    /** A Redis that takes connections and never answers: the failure that had no timeout. */
    async function silentRedis(): Promise<number> {
      const sockets: net.Socket[] = [];
      const server = net.createServer((s) => {
        sockets.push(s);
        s.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      closers.push(
        () =>
          new Promise((resolve) => {
            for (const s of sockets) s.destroy();
            server.close(resolve);
          }),
      );
      return (server.address() as net.AddressInfo).port;
    }

    function pacerOn(port: number, clock: ManualClock, sleep: Sleep) {
      const redis = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0, lazyConnect: false });
      redis.on('error', () => undefined);
      closers.push(async () => {
        redis.disconnect();
      });
      const circuit = new RedisCircuit({ ping: () => redis.ping(), clock, timeoutMs: 100 });
      closers.push(async () => {
        circuit.stop();
      });
      return { pacer: new RedisPacer(redis, clock, sleep, 'mailroom:', circuit), circuit };
    }

    it('paces on its own, spaced by the rate, when Redis never answers (an INCR used to wait forever)', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1));
      const slept: number[] = [];
      const { pacer, circuit } = pacerOn(await silentRedis(), clock, async (ms) => {
        slept.push(ms);
        clock.advance(ms);
      });
      for (let i = 0; i < 4; i++) await pacer.acquire('svc', 2);
      // Each acquire failed over to this worker's own schedule: 500 ms apart at 2 a second.
      expect(slept.filter((ms) => ms > 0)).toEqual([500, 500, 500]);
      // Three unanswered commands opened the circuit: the fourth was not sent at all.
      expect(circuit.available).toBe(false);
    });

    it('keeps a throttling slow-down on its own when Redis refuses connections', async () => {
      const port = await silentRedis();
      await closers.splice(0)[0]!(); // nothing listens there any more
      const clock = new ManualClock(Date.UTC(2026, 0, 1));
      const slept: number[] = [];
      const { pacer } = pacerOn(port, clock, async (ms) => {
        slept.push(ms);
        clock.advance(ms);
      });
      await pacer.slowDown('svc', clock.now() + 3_000).catch(() => undefined);
      expect(await pacer.waitSlowDown('svc')).toBe(true);
      expect(slept).toEqual([3_000]);
    });
  });
});
