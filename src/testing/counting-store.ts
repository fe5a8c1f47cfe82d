import type { AppendLog, AppendLogStore } from '../core/objects/append-log.js';
import type { GetOptions, ListOptions, ObjectInfo, ObjectStore, ObjectVersion, PutOptions, StoredObject, WriterLock } from '../core/objects/object-store.js';
import { validatePutData } from '../core/objects/keys.js';

/** Calls of one kind. */
export interface OperationCount {
  /** Calls started (a listing counts when its iteration starts). */
  readonly calls: number;
  /** Calls that rejected (for any reason, preconditions included). */
  readonly failures: number;
  /** Bytes moved: returned by gets, handed to puts (counted when the put starts); 0 for the rest. */
  readonly bytes: number;
}

/** A point-in-time copy of every counter. */
export interface ObjectStoreCounts {
  /** Whole-object gets. */
  readonly get: OperationCount;
  /** Gets with a `range`. */
  readonly rangedGet: OperationCount;
  /** Puts, and the creation of append logs (see core/objects/append-log.ts). */
  readonly put: OperationCount;
  /** Appends to append logs (each one durable, like a put). */
  readonly append: OperationCount;
  readonly delete: OperationCount;
  /** Batch deletes (`deleteMany` requests), plus the keys they named. */
  readonly deleteMany: OperationCount & { readonly objects: number };
  /** Listings, plus the objects they yielded. */
  readonly list: OperationCount & { readonly objects: number };
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Kind = 'get' | 'rangedGet' | 'put' | 'append' | 'delete' | 'deleteMany' | 'list';

function zeroCounts(): { [K in Kind]: Mutable<OperationCount> } & { list: { objects: number }; deleteMany: { objects: number } } {
  const zero = (): Mutable<OperationCount> => ({ calls: 0, failures: 0, bytes: 0 });
  return { get: zero(), rangedGet: zero(), put: zero(), append: zero(), delete: zero(), deleteMany: { ...zero(), objects: 0 }, list: { ...zero(), objects: 0 } };
}

/**
 * Wraps any ObjectStore and counts its calls and bytes by kind, so tests and benchmarks can
 * assert I/O costs ("a cached read issues no get", "one commit is one put"). It forwards every
 * call unchanged and rejects with whatever the inner store rejects with.
 */
export class CountingObjectStore implements ObjectStore {
  private counts = zeroCounts();
  /** Present exactly when the inner store has it, so callers see the same capabilities. */
  readonly deleteMany?: (keys: readonly string[]) => Promise<void>;
  readonly lockWriter?: (path: string) => Promise<WriterLock>;
  readonly appendLogs?: AppendLogStore;

  constructor(
    /** The wrapped store. */
    readonly inner: ObjectStore,
  ) {
    this.lockWriter = inner.lockWriter?.bind(inner);
    const logs = inner.appendLogs;
    if (logs) {
      this.appendLogs = {
        createLog: async (key) => {
          this.counts.put.calls++;
          return this.countedLog(await this.track(this.counts.put, () => logs.createLog(key)));
        },
        exists: (key) => logs.exists(key),
        ...(logs.sync ? { sync: logs.sync.bind(logs) } : {}),
        ...(logs.flags ? { flags: logs.flags } : {}),
      };
    }
    const batch = inner.deleteMany?.bind(inner);
    if (batch) {
      this.deleteMany = async (keys) => {
        this.counts.deleteMany.calls++;
        this.counts.deleteMany.objects += keys.length;
        return this.track(this.counts.deleteMany, () => batch(keys));
      };
    }
  }

  /** A copy of the counters now; later calls do not change it. */
  snapshot(): ObjectStoreCounts {
    const { get, rangedGet, put, append, deleteMany, list } = this.counts;
    return { get: { ...get }, rangedGet: { ...rangedGet }, put: { ...put }, append: { ...append }, delete: { ...this.counts.delete }, deleteMany: { ...deleteMany }, list: { ...list } };
  }

  /** Sets every counter back to zero. */
  reset(): void {
    this.counts = zeroCounts();
  }

  async get(key: string, options?: GetOptions): Promise<StoredObject | undefined> {
    const count = options?.range ? this.counts.rangedGet : this.counts.get;
    count.calls++;
    const result = await this.track(count, () => this.inner.get(key, options));
    if (result) count.bytes += result.data.length;
    return result;
  }

  async put(key: string, data: Uint8Array, options?: PutOptions): Promise<{ version: ObjectVersion }> {
    validatePutData(key, data); // rejected as the inner store would, before counting bytes it has not got
    const count = this.counts.put;
    count.calls++;
    count.bytes += data.length;
    return this.track(count, () => this.inner.put(key, data, options));
  }

  async delete(key: string): Promise<void> {
    this.counts.delete.calls++;
    return this.track(this.counts.delete, () => this.inner.delete(key));
  }

  async *list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> {
    // Resolved per step so a reset() during a long listing counts into the fresh counters.
    this.counts.list.calls++;
    try {
      for await (const info of this.inner.list(prefix, options)) {
        this.counts.list.objects++;
        yield info;
      }
    } catch (e) {
      this.counts.list.failures++;
      throw e;
    }
  }

  private countedLog(log: AppendLog): AppendLog {
    // Resolved per call, so a reset() meanwhile counts into the fresh counters.
    const counts = (): Mutable<OperationCount> => this.counts.append;
    const track = <T>(count: Mutable<OperationCount>, call: () => Promise<T>): Promise<T> => this.track(count, call);
    return {
      key: log.key,
      get size() {
        return log.size;
      },
      async append(data) {
        validatePutData(log.key, data, 'append'); // as the inner log would, before counting bytes it has not got
        const count = counts();
        count.calls++;
        count.bytes += data.length;
        return track(count, () => log.append(data));
      },
      close: () => log.close(),
    };
  }

  private async track<T>(count: Mutable<OperationCount>, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      count.failures++;
      throw e;
    }
  }
}
