/**
 * The catalog a send reads on every request (key, organization, template, service), kept in
 * memory for as long as the catalog stamp (migration 0010) does not move. Triggers bump the
 * stamp on every catalog change, from any process (another API process, `mailroom keys
 * revoke` on the same SQLite file), so a read first makes sure the cache belongs to the
 * current stamp: a key revoked anywhere stops working at the next request.
 *
 * Checking costs one point read of a one-row table. Reads within `windowMs` of the last check
 * share it, and concurrent reads share one check in flight, so under any load the stamp is
 * read at most about once per window (1 ms: ≤ 1,000 reads a second, ~1% of a core) however
 * many sends ask. Before this, entries expired after 1 s: with 300 organizations each saw a
 * request less often than that, so nearly every send reread its five catalog rows.
 * Credits and limits are never decided from here: the acceptance transaction reads them fresh.
 */
export class ReadCache {
  private readonly entries = new Map<string, Promise<unknown>>();
  private stamp: number | undefined;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private checking: Promise<void> | undefined;

  constructor(
    private readonly readStamp: () => Promise<number>,
    private readonly windowMs = 1,
    private readonly capacity = 10_000,
  ) {}

  async read<T>(key: string, load: () => Promise<T>): Promise<T> {
    await this.fresh();
    const hit = this.entries.get(key);
    if (hit !== undefined) return hit as Promise<T>;
    const value = load();
    if (this.entries.size >= this.capacity) this.entries.clear();
    this.entries.set(key, value);
    // A failed read is not remembered.
    value.catch(() => this.entries.delete(key));
    return value;
  }

  /** This process changed the catalog: forget it now (the stamp moves at its commit too). */
  clear(): void {
    this.entries.clear();
    this.checkedAt = Number.NEGATIVE_INFINITY;
  }

  private fresh(): Promise<void> | void {
    if (performance.now() - this.checkedAt < this.windowMs) return;
    this.checking ??= this.check().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  private async check(): Promise<void> {
    const startedAt = performance.now();
    const stamp = await this.readStamp();
    if (stamp !== this.stamp) {
      this.entries.clear();
      this.stamp = stamp;
    }
    this.checkedAt = startedAt;
  }
}
