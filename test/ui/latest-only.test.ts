import { describe, expect, it } from 'vitest';
import { latestOnly, type LoadResult } from '../../ui/src/lib/latest-only.js';

/** A load the test answers when it wants. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("latestOnly (the UI pages' loads)", () => {
  it('drops a slow older answer that arrives after a newer one', async () => {
    const loads = latestOnly();
    const shown: Array<LoadResult<string>> = [];
    const old = deferred<string>();
    const fresh = deferred<string>();
    const first = loads.run(
      () => old.promise,
      (r) => shown.push(r),
    );
    const second = loads.run(
      () => fresh.promise,
      (r) => shown.push(r),
    );
    fresh.resolve('7 days');
    await second;
    old.resolve('90 days');
    await first;
    expect(shown).toEqual([{ ok: true, data: '7 days' }]);
  });

  it('drops an older failure too, and shows the latest failure', async () => {
    const loads = latestOnly();
    const shown: Array<LoadResult<string>> = [];
    const old = deferred<string>();
    const fresh = deferred<string>();
    const first = loads.run(
      () => old.promise,
      (r) => shown.push(r),
    );
    const second = loads.run(
      () => fresh.promise,
      (r) => shown.push(r),
    );
    fresh.reject(new Error('503'));
    await second;
    old.reject(new Error('timeout'));
    await first;
    expect(shown).toHaveLength(1);
    expect(shown[0]).toMatchObject({ ok: false, error: new Error('503') });
  });

  it('shows answers in turn when each load ends before the next starts, and none after cancel', async () => {
    const loads = latestOnly();
    const shown: Array<LoadResult<number>> = [];
    await loads.run(
      async () => 1,
      (r) => shown.push(r),
    );
    await loads.run(
      async () => 2,
      (r) => shown.push(r),
    );
    const late = deferred<number>();
    const third = loads.run(
      () => late.promise,
      (r) => shown.push(r),
    );
    loads.cancel();
    late.resolve(3);
    await third;
    expect(shown).toEqual([
      { ok: true, data: 1 },
      { ok: true, data: 2 },
    ]);
  });
});
