/**
 * Wakes the webhook dispatchers of this process: the event notifier and the send path call
 * `nudge()` after writing events, so a delivery goes out now rather than at the next poll.
 */
export class Wakeup {
  private readonly listeners = new Set<() => void>();

  /** Returns the function that stops listening. */
  listen(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  nudge(): void {
    for (const fn of this.listeners) fn();
  }
}
