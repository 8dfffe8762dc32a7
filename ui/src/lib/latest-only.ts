/** What one load ended in. */
export type LoadResult<T> = { ok: true; data: T } | { ok: false; error: unknown };

/**
 * Hands on the answer of the latest load only. A page that reloads when its filters change
 * starts a second load while the first is still out; if the first answers last (a slow 90-day
 * overview after a quick 7-day one), its answer used to overwrite the newer one, and the page
 * showed data for filters no longer on screen. `cancel()` drops whatever is still out (the
 * page was left).
 */
export function latestOnly() {
  let latest = 0;
  return {
    async run<T>(load: () => Promise<T>, deliver: (result: LoadResult<T>) => void): Promise<void> {
      const mine = ++latest;
      let result: LoadResult<T>;
      try {
        result = { ok: true, data: await load() };
      } catch (error) {
        result = { ok: false, error };
      }
      if (mine === latest) deliver(result);
    },
    cancel(): void {
      latest += 1;
    },
  };
}
