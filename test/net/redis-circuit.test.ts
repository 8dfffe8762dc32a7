import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { FAILURES_TO_OPEN, RedisCircuit, RedisUnavailable, type RedisHealthChange } from '../../src/net/redis-circuit.js';

/** Issue 25 §4: the circuit in front of a Redis connection, with short intervals (the defaults are 1 s to 30 s). */

const refused = async (): Promise<never> => {
  throw new Error('connect ECONNREFUSED 127.0.0.1:6390');
};
const replyError = (): Error =>
  Object.assign(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'), { name: 'ReplyError' });

async function until(condition: () => boolean): Promise<void> {
  // Bounded: 5 s for intervals of a few ms.
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

function circuit(ping: () => Promise<unknown>, timeoutMs = 1000) {
  const changes: RedisHealthChange[] = [];
  const c = new RedisCircuit({
    ping,
    clock: new ManualClock(),
    timeoutMs,
    onChange: (x) => changes.push(x),
    firstOpenMs: 5,
    maxOpenMs: 20,
    random: () => 0.5,
  });
  return { c, changes };
}

describe('RedisCircuit', () => {
  it(`opens after ${FAILURES_TO_OPEN} consecutive failures, then refuses without running the command`, async () => {
    let pingOk = false;
    let pings = 0;
    const { c, changes } = circuit(async () => {
      pings++;
      if (!pingOk) throw new Error('connect ECONNREFUSED');
      return 'PONG';
    });
    for (let i = 0; i < FAILURES_TO_OPEN - 1; i++) await expect(c.run(refused)).rejects.toThrow('ECONNREFUSED');
    // A success in between starts the count again.
    expect(await c.run(async () => 1)).toBe(1);
    for (let i = 0; i < FAILURES_TO_OPEN - 1; i++) await expect(c.run(refused)).rejects.toThrow('ECONNREFUSED');
    expect(c.available).toBe(true);
    await expect(c.run(refused)).rejects.toThrow('ECONNREFUSED');
    expect(c.available).toBe(false);
    expect(changes).toMatchObject([{ state: 'down', failures: FAILURES_TO_OPEN, nextProbeMs: 5 }]);

    let ran = 0;
    for (let i = 0; i < 10; i++)
      await expect(
        c.run(async () => {
          ran++;
          return 1;
        }),
      ).rejects.toBeInstanceOf(RedisUnavailable);
    expect(ran).toBe(0);

    // Probes fail a few times (the interval doubles: 5, 10, 20, 20 ms), then one answers.
    await until(() => pings >= 3);
    expect(c.available).toBe(false);
    pingOk = true;
    await until(() => c.available);
    expect(changes).toHaveLength(2);
    expect(changes[1]).toMatchObject({ state: 'up' });
    expect((changes[1] as { probes: number }).probes).toBeGreaterThanOrEqual(4);
    expect(await c.run(async () => 2)).toBe(2);
  });

  it("does not count Redis's own error replies: it answered", async () => {
    const { c } = circuit(async () => 'PONG');
    for (let i = 0; i < FAILURES_TO_OPEN * 2; i++)
      await expect(
        c.run(async () => {
          throw replyError();
        }),
      ).rejects.toThrow('WRONGTYPE');
    expect(c.available).toBe(true);
  });

  it('counts a command with no answer within the timeout as a failure', async () => {
    const { c, changes } = circuit(() => new Promise(() => undefined), 10);
    for (let i = 0; i < FAILURES_TO_OPEN; i++)
      await expect(c.run(() => new Promise(() => undefined))).rejects.toThrow('did not answer within 10 ms');
    expect(c.available).toBe(false);
    expect(changes[0]).toMatchObject({ state: 'down', reason: 'Redis did not answer within 10 ms' });
  });

  it('closes when a command still in flight answers, and probes no more once stopped', async () => {
    let pings = 0;
    const { c, changes } = circuit(async () => {
      pings++;
      throw new Error('connect ECONNREFUSED');
    });
    let answer: (v: number) => void = () => undefined;
    const slow = c.run(
      () =>
        new Promise<number>((resolve) => {
          answer = resolve;
        }),
    );
    for (let i = 0; i < FAILURES_TO_OPEN; i++) await expect(c.run(refused)).rejects.toThrow();
    expect(c.available).toBe(false);
    answer(7);
    expect(await slow).toBe(7);
    expect(c.available).toBe(true);
    expect(changes.map((x) => x.state)).toEqual(['down', 'up']);

    // Probes on the test's clock from here (none is scheduled while the circuit is closed).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      for (let i = 0; i < FAILURES_TO_OPEN; i++) await expect(c.run(refused)).rejects.toThrow();
      await vi.advanceTimersByTimeAsync(20);
      expect(pings).toBeGreaterThanOrEqual(1);
      c.stop();
      const seen = pings;
      // Far past the longest interval (20 ms): no probe is left to run.
      await vi.advanceTimersByTimeAsync(1_000);
      expect(pings).toBe(seen);
    } finally {
      vi.useRealTimers();
    }
  });
});
