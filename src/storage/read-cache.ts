/**
 * Short-lived cache of the catalog a send reads on every request (key, organization,
 * template, service): five of a send's thirteen statements. Writes through this process's
 * store clear it at once; writes from another process are seen within `ttlMs`, so a key
 * revoked through another API process stops working within a second. Credits and limits are
 * never decided from it: the acceptance transaction reads them fresh.
 */
export class ReadCache {
  private readonly entries = new Map<string, { expires: number; value: Promise<unknown> }>();

  constructor(private readonly ttlMs: number, private readonly capacity = 10_000) {}

  read<T>(key: string, load: () => Promise<T>): Promise<T> {
    const now = performance.now();
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.expires > now) return hit.value as Promise<T>;
    const value = load();
    if (this.entries.size >= this.capacity) this.entries.clear();
    this.entries.set(key, { expires: now + this.ttlMs, value });
    // A failed read is not remembered.
    value.catch(() => this.entries.delete(key));
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}
