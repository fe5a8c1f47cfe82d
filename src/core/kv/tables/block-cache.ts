/** What the cache holds: anything that knows its approximate heap size. */
export interface Sized {
  /** Approximate heap bytes, charged against the cache's budget. */
  readonly bytes: number;
}

interface Loading<V> {
  readonly promise: Promise<V>;
  /** Cache the value once loaded (any waiter that wanted it cached sets this). */
  fill: boolean;
}

/**
 * A byte-bounded LRU of table blocks (decoded, or as written for a fresh table's blocks until
 * their first read: see SealedBlock), shared by all tables of one engine, plus the loads
 * in flight: concurrent misses of one block wait for the same store read instead of each issuing
 * their own (a burst of reads of a cold table would otherwise fetch each block many times).
 * Map iteration order is insertion order, so re-inserting on hit makes the first key the LRU.
 */
export class BlockCache<V extends Sized> {
  private readonly map = new Map<string, V>();
  private readonly loads = new Map<string, Loading<V>>();
  private used = 0;

  constructor(readonly capacityBytes: number) {}

  get(key: string): V | undefined {
    const hit = this.map.get(key);
    if (hit === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, hit);
    return hit;
  }

  /** Whether `key` is cached (without refreshing its place in the LRU order). */
  has(key: string): boolean {
    return this.map.has(key);
  }

  set(key: string, value: V): void {
    const old = this.map.get(key);
    if (old !== undefined) {
      this.used -= old.bytes;
      this.map.delete(key);
    }
    if (value.bytes > this.capacityBytes) return;
    this.map.set(key, value);
    this.used += value.bytes;
    while (this.used > this.capacityBytes) {
      const [oldest, entry] = this.map.entries().next().value as [string, V];
      this.used -= entry.bytes;
      this.map.delete(oldest);
    }
  }

  /** The load of `key` in flight, if any; `fill` asks for its value to be cached when it lands. */
  loading(key: string, fill: boolean): Promise<V> | undefined {
    const entry = this.loads.get(key);
    if (entry === undefined) return undefined;
    if (fill) entry.fill = true;
    return entry.promise;
  }

  /**
   * Registers a load of `key` (the caller checked `get` and `loading` first), so misses that
   * arrive before it lands share it. Once it succeeds the value is cached when `fill` (or a
   * waiter's `fill`) asked for it; a failed load is forgotten and the next miss tries again.
   */
  track(key: string, promise: Promise<V>, fill: boolean): void {
    const entry: Loading<V> = { promise, fill };
    this.loads.set(key, entry);
    promise.then(
      (value) => {
        if (this.loads.get(key) !== entry) return; // evicted meanwhile: its table is gone
        this.loads.delete(key);
        if (entry.fill) this.set(key, value);
      },
      () => {
        if (this.loads.get(key) === entry) this.loads.delete(key);
      },
    );
  }

  /** Drops every entry and load whose key starts with `prefix` (a deleted table's blocks). */
  evictPrefix(prefix: string): void {
    for (const [key, value] of this.map) {
      if (key.startsWith(prefix)) {
        this.used -= value.bytes;
        this.map.delete(key);
      }
    }
    for (const key of this.loads.keys()) if (key.startsWith(prefix)) this.loads.delete(key);
  }

  get usedBytes(): number {
    return this.used;
  }

  /** Loads in flight (for tests). */
  get loadingCount(): number {
    return this.loads.size;
  }
}
