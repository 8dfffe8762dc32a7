import { storageTrouble } from '../errors/storage-trouble.js';
import type { Store } from '../storage/store.js';

/** Waits between tries of a write the storage refused: doubling from 250 ms, at most 5 s apart. */
export const WRITE_RETRY_FIRST_MS = 250;
export const WRITE_RETRY_MAX_MS = 5_000;

export interface StorageRetry {
  /** The store whose transactions are retried while the storage is unavailable or full. */
  store: Store;
  /** No more waiting: a write under retry fails at its next wait (a stop). */
  stop(): void;
}

/**
 * A store for the worker's outcome writes (sent, retry, failed, released): while the database
 * is unreachable or the disk full, a write is tried again (WRITE_RETRY_*) for up to `forMs`
 * (the lease), so the message is settled, or back in the queue, as soon as writes work again,
 * instead of waiting out its 5-minute lease. Every such write names the lease it expects
 * (compare-and-set), so trying one again after a commit whose answer was lost does nothing twice.
 * Other errors fail at once, as before.
 */
export function retryingStore(store: Store, forMs: number, sleep: (ms: number) => Promise<void> = defaultSleep): StorageRetry {
  let stopped = false;
  const wakers = new Set<() => void>();
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        wakers.delete(wake);
        resolve();
      };
      wakers.add(wake);
      void sleep(ms).then(wake);
    });
  const transaction: Store['transaction'] = async (fn, options) => {
    const deadline = Date.now() + forMs;
    for (let delay = WRITE_RETRY_FIRST_MS; ; delay = Math.min(delay * 2, WRITE_RETRY_MAX_MS)) {
      let last: unknown;
      try {
        return await store.transaction(fn, options);
      } catch (err) {
        if (stopped || storageTrouble(err) === undefined || Date.now() + delay > deadline) throw err;
        last = err;
      }
      await wait(delay);
      // Stopped while waiting: the storage's own error, so callers still see it for what it is.
      if (stopped) throw last;
    }
  };
  return {
    store: { ...store, transaction },
    stop: () => {
      stopped = true;
      for (const wake of [...wakers]) wake();
    },
  };
}

const defaultSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });
