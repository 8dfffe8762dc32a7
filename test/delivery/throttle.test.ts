import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { LocalPacer, MAX_THROTTLE_PAUSE_MS, RedisPacer, THROTTLE_PAUSE_MS, throttlePause } from '../../src/delivery/pacing.js';
import { DeliveryError, type TransportFactory } from '../../src/delivery/transport.js';
import { closerPerTest } from '../support/cleanup.js';
import { insertQueued, row } from '../support/delivery.js';
import { failoverSetup } from '../support/failover.js';
import { REDIS_URL, redisAvailable } from '../support/redis.js';
import { describeDialects } from '../support/dialects.js';

const redisUp = await redisAvailable();

/** A provider answering 429 to the first `throttled` sends (with Retry-After when given), then accepting. */
function throttlingProvider(throttled: number, retryAfterMs: number | undefined): { factory: TransportFactory; sends: string[] } {
  const sends: string[] = [];
  const factory: TransportFactory = () => ({
    send: async (mail) => {
      sends.push(mail.messageId);
      if (sends.length <= throttled) {
        throw new DeliveryError('temporary', 'provider 429 Too Many Requests', [], [], {
          throttled: true,
          ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        });
      }
      return { response: 'provider 200 OK', providerMessageId: `p-${sends.length}` };
    },
    close: async () => undefined,
  });
  return { factory, sends };
}

describeDialects('throttling on %s', (dialect, skip) => {
  const closer = closerPerTest();

  it.skipIf(skip)(
    'Retry-After sets the retry exactly; the service pauses (capped) and the throttled send does not count for the breaker',
    async () => {
      const s = await failoverSetup(dialect, closer, { primarySettings: {} });
      const slept: number[] = [];
      const pacer = new LocalPacer(s.clock, async (ms) => {
        slept.push(ms);
      });
      const provider = throttlingProvider(1, 120_000);
      const worker = s.worker({ pacer, transports: { smtp: provider.factory } });
      const start = s.clock.now();
      const [id] = await insertQueued(s.store, 1, start, 'primary');
      expect(await worker.runOnce()).toBe(1);
      const m = await row(s.store, id!);
      expect(m.status).toBe('queued');
      expect(m.next_attempt_at).toBe(start + 120_000);

      // The next message of the service waits out the pause: 30 s at most, not the 120 s.
      const [next] = await insertQueued(s.store, 1, start, 'primary');
      expect(await worker.runOnce()).toBe(1);
      expect(slept).toEqual([MAX_THROTTLE_PAUSE_MS]);
      expect((await row(s.store, next!)).status).toBe('sent');

      s.clock.advance(120_000);
      expect(await worker.runOnce()).toBe(1);
      expect((await row(s.store, id!)).status).toBe('sent');
      expect(provider.sends).toEqual([id, next, id]);
      expect((await s.admin('/organizations/acme/services/primary')).breaker).toEqual({
        state: 'closed',
        consecutive_failures: 0,
      });
    },
  );

  it.skipIf(skip)('without Retry-After: the retry is on the schedule and the pause is the default', async () => {
    const s = await failoverSetup(dialect, closer, { primarySettings: {} });
    const slept: number[] = [];
    const pacer = new LocalPacer(s.clock, async (ms) => {
      slept.push(ms);
    });
    const worker = s.worker({ pacer, transports: { smtp: throttlingProvider(1, undefined).factory } });
    const start = s.clock.now();
    const [id] = await insertQueued(s.store, 1, start, 'primary');
    await worker.runOnce();
    expect((await row(s.store, id!)).next_attempt_at).toBe(start + 10_000); // QUICK_RETRY, no jitter
    await insertQueued(s.store, 1, start, 'primary');
    await worker.runOnce();
    expect(slept).toEqual([THROTTLE_PAUSE_MS]);
  });
});

describe('pacers slow down', () => {
  it('throttlePause: Retry-After, else the default, never over the cap', () => {
    expect(throttlePause(undefined)).toBe(THROTTLE_PAUSE_MS);
    expect(throttlePause(5_000)).toBe(5_000);
    expect(throttlePause(86_400_000)).toBe(MAX_THROTTLE_PAUSE_MS);
  });

  it('LocalPacer: a slow-down delays the next slot of that service only, and ends', async () => {
    const clock = new ManualClock();
    const slept: number[] = [];
    const pacer = new LocalPacer(clock, async (ms) => {
      slept.push(ms);
    });
    await pacer.slowDown('acme/a', clock.now() + 5_000);
    await pacer.acquire('acme/a', 10);
    await pacer.acquire('acme/b', 10);
    expect(slept).toEqual([5_000]);
    expect(await pacer.waitSlowDown('acme/b')).toBe(false);
    clock.advance(6_000);
    expect(await pacer.waitSlowDown('acme/a')).toBe(false);
  });

  describe.skipIf(!redisUp)('RedisPacer', () => {
    const clients: Redis[] = [];
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((c) => c.quit().catch(() => undefined)));
    });

    it('a slow-down one worker hears of holds the other workers too', async () => {
      const clock = new ManualClock();
      const prefix = `test-throttle-${process.pid}-${Math.random().toString(36).slice(2)}:`;
      const a = new Redis(REDIS_URL);
      const b = new Redis(REDIS_URL);
      clients.push(a, b);
      const sleptA: number[] = [];
      const sleptB: number[] = [];
      const pacerA = new RedisPacer(
        a,
        clock,
        async (ms) => {
          sleptA.push(ms);
        },
        prefix,
      );
      const pacerB = new RedisPacer(
        b,
        clock,
        async (ms) => {
          sleptB.push(ms);
        },
        prefix,
      );
      await pacerA.slowDown('acme/primary', clock.now() + 4_000);
      await pacerA.slowDown('acme/primary', clock.now() + 1_000); // an earlier end does not shorten it
      expect(await pacerB.waitSlowDown('acme/primary')).toBe(true);
      await pacerB.acquire('acme/primary', 100);
      expect(sleptB).toEqual([4_000, 4_000]);
      expect(await pacerB.waitSlowDown('acme/other')).toBe(false);
      clock.advance(5_000);
      expect(await pacerA.waitSlowDown('acme/primary')).toBe(false);
      expect(sleptA).toEqual([]);
    });
  });
});
