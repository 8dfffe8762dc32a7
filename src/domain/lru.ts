/** A small least-recently-used map: Map keeps insertion order, so the first key is the oldest. */
export class Lru<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly capacity: number) {}

  getOrCreate(key: string, create: () => V): V {
    let value = this.entries.get(key);
    if (value === undefined) {
      value = create();
      if (this.entries.size >= this.capacity) {
        const oldest = this.entries.keys().next();
        if (oldest.done !== true) this.entries.delete(oldest.value);
      }
    } else {
      this.entries.delete(key);
    }
    this.entries.set(key, value);
    return value;
  }

  get size(): number {
    return this.entries.size;
  }
}
