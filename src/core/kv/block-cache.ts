/**
 * A byte-bounded LRU of decoded table blocks and indexes, shared by all tables of one engine.
 * Map iteration order is insertion order, so re-inserting on hit makes the first key the LRU.
 */
export class BlockCache<V> {
  private readonly map = new Map<string, { value: V; bytes: number }>();
  private used = 0;

  constructor(readonly capacityBytes: number) {}

  get(key: string): V | undefined {
    const hit = this.map.get(key);
    if (!hit) return undefined;
    this.map.delete(key);
    this.map.set(key, hit);
    return hit.value;
  }

  set(key: string, value: V, bytes: number): void {
    const old = this.map.get(key);
    if (old) {
      this.used -= old.bytes;
      this.map.delete(key);
    }
    if (bytes > this.capacityBytes) return;
    this.map.set(key, { value, bytes });
    this.used += bytes;
    while (this.used > this.capacityBytes) {
      const oldest = this.map.keys().next().value as string;
      this.used -= this.map.get(oldest)!.bytes;
      this.map.delete(oldest);
    }
  }

  /** Drops every entry whose key starts with `prefix` (a deleted table's blocks). */
  evictPrefix(prefix: string): void {
    for (const [key, entry] of this.map) {
      if (key.startsWith(prefix)) {
        this.used -= entry.bytes;
        this.map.delete(key);
      }
    }
  }

  get usedBytes(): number {
    return this.used;
  }
}
