import { KEY_USE_INTERVAL_MS } from './api-keys.js';

/** Keys remembered at most; past it, entries older than the interval are dropped (a memo, not a record). */
const MAX_REMEMBERED = 10_000;

/**
 * `last_used_at` of API keys (issue 29), written off the request's path. Each process remembers
 * when it last wrote a key's use and writes again only a minute later: one write a minute per key
 * in use, however many requests it serves (at 500 sends/s on one key, 1 write in 30,000 requests).
 * The write itself is conditional (ApiKeysRepo.markUsed), so N processes sharing a database
 * change a key's row about once a minute, not N times. A failed write is reported to the caller's
 * `onError` and never reaches the request: the use is retried after the next interval.
 */
export class KeyUseRecorder {
  private readonly written = new Map<string, number>();
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly write: (keyId: string, now: number) => Promise<unknown>) {}

  /** Notes that a key authenticated at `now`; returns the write it started, if any (it never rejects). */
  note(keyId: string, now: number, onError: (err: unknown) => void): Promise<void> | undefined {
    const last = this.written.get(keyId);
    if (last !== undefined && now - last < KEY_USE_INTERVAL_MS && now >= last) return undefined;
    if (this.written.size >= MAX_REMEMBERED) this.forgetBefore(now - KEY_USE_INTERVAL_MS);
    this.written.set(keyId, now);
    const done = Promise.resolve()
      .then(() => this.write(keyId, now))
      .then(
        () => undefined,
        (err: unknown) => {
          try {
            onError(err);
          } catch {
            // A logger that throws must not turn into an unhandled rejection either.
          }
        },
      )
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
    return done;
  }

  /** Resolves once the writes started so far are done: the store waits for it before closing. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private forgetBefore(cutoff: number): void {
    for (const [id, at] of this.written) if (at < cutoff) this.written.delete(id);
    // Still full of keys used within the minute: start over rather than grow without bound.
    if (this.written.size >= MAX_REMEMBERED) this.written.clear();
  }
}
