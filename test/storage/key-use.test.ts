import { describe, expect, it } from 'vitest';
import { KeyUseRecorder } from '../../src/storage/key-use.js';

/**
 * The per-process memo in front of `last_used_at` (issue 29): one write per key a minute, a
 * failed write reported and never thrown, and `idle` for the store's close.
 */
describe('KeyUseRecorder', () => {
  it('writes a key once a minute, each key on its own; a clock set back writes again', async () => {
    const writes: Array<[string, number]> = [];
    const r = new KeyUseRecorder(async (id, now) => {
      writes.push([id, now]);
    });
    const fail = () => {
      throw new Error('no error expected');
    };
    r.note('key_a', 0, fail);
    r.note('key_a', 59_999, fail);
    r.note('key_b', 10, fail);
    r.note('key_a', 60_000, fail);
    r.note('key_a', 30_000, fail);
    await r.idle();
    expect(writes).toEqual([
      ['key_a', 0],
      ['key_b', 10],
      ['key_a', 60_000],
      ['key_a', 30_000],
    ]);
  });

  it('a failed write goes to onError, never rejects, and is tried again after the interval', async () => {
    let calls = 0;
    const r = new KeyUseRecorder(async () => {
      calls += 1;
      throw new Error('disk full');
    });
    const errors: unknown[] = [];
    await expect(r.note('key_a', 0, (e) => errors.push(e))).resolves.toBeUndefined();
    // A logger that throws is swallowed too: no unhandled rejection.
    await expect(
      r.note('key_b', 0, () => {
        throw new Error('logger broke');
      }),
    ).resolves.toBeUndefined();
    expect(r.note('key_a', 1_000, (e) => errors.push(e))).toBeUndefined();
    await r.note('key_a', 60_000, (e) => errors.push(e));
    expect(errors.map((e) => (e as Error).message)).toEqual(['disk full', 'disk full']);
    expect(calls).toBe(3);
  });

  it('a write that throws synchronously is caught like a rejected one', async () => {
    const r = new KeyUseRecorder(() => {
      throw new Error('sync');
    });
    const errors: unknown[] = [];
    await r.note('key_a', 0, (e) => errors.push(e));
    expect(errors).toHaveLength(1);
  });
});
