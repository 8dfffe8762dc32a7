import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { ApiError } from '../../src/errors/api-error.js';
import { LimiterBackend } from '../../src/protection/backend.js';
import { MemoryLimiterStore } from '../../src/protection/store.js';

/** Issue 17: the log throttle of an unreachable limit store runs on the injected clock. */
describe('LimiterBackend on the injected clock', () => {
  const failing = async (): Promise<number> => {
    throw new Error('connection refused');
  };

  it('logs a failing scope at most once per 10 s of the clock, and says how many it kept quiet', async () => {
    const clock = new ManualClock();
    const logs: Array<{ obj: object; msg: string }> = [];
    const backend = new LimiterBackend(
      new MemoryLimiterStore(clock),
      1000,
      undefined,
      { warn: (obj, msg) => logs.push({ obj, msg }) },
      clock,
    );

    expect(await backend.call('plan', true, -1, failing)).toBe(-1);
    clock.advance(9_999);
    expect(await backend.call('plan', true, -1, failing)).toBe(-1);
    await expect(backend.call('plan', false, -1, failing)).rejects.toBeInstanceOf(ApiError);
    expect(logs).toHaveLength(1);

    // Another scope has its own throttle.
    await backend.call('recipient', true, undefined, async () => {
      throw new Error('down');
    });
    expect(logs).toHaveLength(2);

    clock.advance(1);
    await backend.call('plan', true, -1, failing);
    expect(logs).toHaveLength(3);
    expect(logs[2]?.msg).toBe('rate-limit store unavailable');
    expect(logs[2]?.obj).toMatchObject({ scope: 'plan', suppressed_since_last_log: 2 });
  });
});
