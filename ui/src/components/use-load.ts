import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { latestOnly } from '../lib/latest-only.js';

/**
 * Loads data for a page: `{data, error, loading, reload}`; reloads when `deps` change. Only the
 * latest load's answer is shown (lib/latest-only.ts): a slow older one never overwrites it.
 */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]) {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true,
  });
  const loads = useRef(latestOnly());
  // The caller's `deps` are `load`'s dependencies, as with useEffect's own list (the caller's linter
  // cannot see them either: `load` is a new closure on every render).
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names load's dependencies in `deps`.
  const run = useCallback(load, deps);
  const reload = useCallback(async () => {
    setState((s) => ({ ...s, loading: true }));
    await loads.current.run(run, (r) =>
      setState(r.ok ? { data: r.data, error: undefined, loading: false } : { data: undefined, error: r.error, loading: false }),
    );
  }, [run]);
  useEffect(() => {
    void reload();
  }, [reload]);
  // Answers that arrive after the page is gone are dropped.
  useEffect(() => () => loads.current.cancel(), []);
  return { ...state, reload };
}
