/**
 * Runs inside a dedicated module worker started by the OPFS tests: holds real OpfsObjectStores
 * (sync access handle mode) and serves their calls from the page, plus a few raw file operations
 * the tests use to plant files and inspect the layout. Exposed with Comlink, carrying errors and
 * bytes with the library's own transfer handlers (src/browser/transfer-handlers.ts), as the
 * browser host does.
 */
import { expose } from 'comlink';
import { exportBytes, registerTransferHandlers, withTransfer } from '../../../src/browser/transfer-handlers.js';
import type { AppendLog, SealFlag } from '../../../src/core/objects/append-log.js';
import type { GetOptions, ListOptions, ObjectInfo, PutOptions } from '../../../src/core/objects/object-store.js';
import { OpfsObjectStore } from '../../../src/stores/opfs/index.js';
import type { OpfsDirectoryHandle } from '../../../src/stores/opfs/opfs-types.js';
import type { WorkerRates } from './opfs-worker-protocol.js';

interface StorageBucket {
  getDirectory(): Promise<OpfsDirectoryHandle>;
}
interface StorageBuckets {
  open(name: string, options: { quota: number }): Promise<StorageBucket>;
  delete(name: string): Promise<void>;
}

const stores = new Map<number, OpfsObjectStore>();
const iterators = new Map<number, AsyncIterator<ObjectInfo>>();
const logs = new Map<number, AppendLog>();
const flags = new Map<number, SealFlag>();
let nextId = 1;

async function rootOf(): Promise<OpfsDirectoryHandle> {
  return (await navigator.storage.getDirectory()) as unknown as OpfsDirectoryHandle;
}

function buckets(): StorageBuckets {
  return (navigator as unknown as { storageBuckets: StorageBuckets }).storageBuckets;
}

async function dirAt(root: OpfsDirectoryHandle, names: readonly string[], create: boolean): Promise<OpfsDirectoryHandle> {
  let dir = root;
  for (const name of names) dir = await dir.getDirectoryHandle(name, { create });
  return dir;
}

const harness = {
  platform: () => ({ sync: 'createSyncAccessHandle' in FileSystemFileHandle.prototype }),

  /**
   * Opens a store. With `bucket` set, its OPFS root is that storage bucket's (created with
   * `quota` bytes), swapped in for navigator.storage.getDirectory while the store opens.
   */
  async open(directory: string, bucket?: { name: string; quota: number }) {
    let store: OpfsObjectStore;
    if (bucket) {
      const root = await (await buckets().open(bucket.name, { quota: bucket.quota })).getDirectory();
      Object.defineProperty(navigator.storage, 'getDirectory', { value: () => Promise.resolve(root), configurable: true });
      try {
        store = await OpfsObjectStore.open({ directory });
      } finally {
        delete (navigator.storage as { getDirectory?: unknown }).getDirectory;
      }
    } else {
      store = await OpfsObjectStore.open({ directory });
    }
    const id = nextId++;
    stores.set(id, store);
    return id;
  },
  async get(id: number, key: string, options?: GetOptions) {
    const got = await store(id).get(key, options);
    // An exact-size copy the worker gives away: large ones move rather than being cloned.
    return got === undefined ? undefined : withTransfer({ ...got, data: exportBytes(got.data, true) });
  },
  put: (id: number, key: string, data: Uint8Array, options?: PutOptions) => store(id).put(key, data, options),
  delete: (id: number, key: string) => store(id).delete(key),
  listOpen(id: number, prefix: string, options?: ListOptions) {
    const iterId = nextId++;
    iterators.set(iterId, store(id).list(prefix, options)[Symbol.asyncIterator]());
    return iterId;
  },
  async listNext(iterId: number, max: number) {
    const it = iterators.get(iterId)!;
    const items: ObjectInfo[] = [];
    while (items.length < max) {
      const next = await it.next().catch((e: unknown) => {
        iterators.delete(iterId);
        throw e;
      });
      if (next.done) {
        iterators.delete(iterId);
        return { items, done: true };
      }
      items.push(next.value);
    }
    return { items, done: false };
  },
  async listClose(iterId: number) {
    await iterators.get(iterId)?.return?.();
    iterators.delete(iterId);
  },
  sweepTempFiles: (id: number) => store(id).sweepTempFiles(),
  // Append logs: each open log lives here under an id; the page holds only the id.
  async createLog(id: number, key: string) {
    const logId = nextId++;
    logs.set(logId, await store(id).appendLogs.createLog(key));
    return logId;
  },
  async appendLog(logId: number, data: Uint8Array) {
    const log = logs.get(logId)!;
    await log.append(data);
    return log.size;
  },
  // A closed log stays registered, so a later append reaches it and rejects as the store says.
  closeLog: (logId: number) => logs.get(logId)?.close(),
  logExists: (id: number, key: string) => store(id).appendLogs.exists(key),
  // Seal flags, held here under an id like logs; undefined when this context cannot hold one.
  async createFlag(id: number, key: string) {
    const flag = await store(id).appendLogs.flags!.create(key);
    if (!flag) return undefined;
    const flagId = nextId++;
    flags.set(flagId, flag);
    return flagId;
  },
  flagRaised: (flagId: number) => flags.get(flagId)!.raised(),
  closeFlag: (flagId: number) => flags.get(flagId)?.close(),
  raiseFlag: (id: number, key: string) => store(id).appendLogs.flags!.raise(key),
  // Closed stores stay registered, so later calls reach them and reject with CLOSED.
  close: (id: number) => store(id).close(),
  async deleteDirectory(directory: string, bucket?: string) {
    if (bucket !== undefined) return buckets().delete(bucket);
    return OpfsObjectStore.deleteDirectory(directory);
  },

  /** Writes a file at raw OPFS names below the root (for planting foreign or temporary files). */
  async writeRaw(names: string[], bytes: Uint8Array) {
    const dir = await dirAt(await rootOf(), names.slice(0, -1), true);
    const file = await dir.getFileHandle(names[names.length - 1], { create: true });
    const access = await file.createSyncAccessHandle!();
    try {
      access.write(bytes, { at: 0 });
      access.flush();
    } finally {
      access.close();
    }
  },

  /** The bytes of a raw file (header included). */
  async readRaw(names: string[]) {
    const dir = await dirAt(await rootOf(), names.slice(0, -1), false);
    const file = await (await dir.getFileHandle(names[names.length - 1])).getFile();
    return new Uint8Array(await file.arrayBuffer());
  },

  /** Cuts a raw file to `size` bytes (a torn tail), flushed. */
  async truncateRaw(names: string[], size: number) {
    const dir = await dirAt(await rootOf(), names.slice(0, -1), false);
    const access = await (await dir.getFileHandle(names[names.length - 1])).createSyncAccessHandle!();
    try {
      // truncate is part of the platform's handle; the library's type leaves it out (unused there).
      (access as typeof access & { truncate(size: number): void }).truncate(size);
      access.flush();
    } finally {
      access.close();
    }
  },

  /** Every raw path below `names` ('/'-joined, directories with a trailing '/'), sorted. */
  async listRaw(names: string[]) {
    const out: string[] = [];
    const walk = async (dir: OpfsDirectoryHandle, at: string): Promise<void> => {
      for await (const [name, handle] of dir.entries()) {
        if (handle.kind === 'directory') {
          out.push(`${at}${name}/`);
          await walk(handle, `${at}${name}/`);
        } else {
          out.push(`${at}${name}`);
        }
      }
    };
    await walk(await dirAt(await rootOf(), names, false), '');
    return out.sort();
  },

  /** Holds a sync access handle on a raw file until `releaseRaw` (to test lock contention). */
  async holdRaw(names: string[]) {
    const dir = await dirAt(await rootOf(), names.slice(0, -1), false);
    held.set(names.join('/'), await (await dir.getFileHandle(names[names.length - 1])).createSyncAccessHandle!());
  },
  releaseRaw(names: string[]) {
    held.get(names.join('/'))?.close();
    held.delete(names.join('/'));
  },

  /** Durable single-write rates in this worker: raw write+flush on one open handle, and store puts. */
  async measure(directory: string, count: number): Promise<WorkerRates> {
    const payload = new Uint8Array(100).fill(7);
    const rate = async (n: number, fn: (i: number) => unknown): Promise<number> => {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await fn(i);
      return Math.round((n * 1000) / (performance.now() - t0));
    };
    const dir = await dirAt(await rootOf(), directory.split('/'), true);
    const access = await (await dir.getFileHandle('raw-log', { create: true })).createSyncAccessHandle!();
    let rawWriteFlushPerSec: number;
    try {
      rawWriteFlushPerSec = await rate(count, (i) => {
        access.write(payload, { at: i * payload.length });
        access.flush();
      });
    } finally {
      access.close();
    }
    const s = await OpfsObjectStore.open({ directory: `${directory}/store` });
    const createPutsPerSec = await rate(count, (i) => s.put(`wal/${String(i).padStart(8, '0')}`, payload, { ifNoneMatch: '*' }));
    const overwritePutsPerSec = await rate(count, (i) => s.put(`manifest/${i % 4}`, payload));
    const getsPerSec = await rate(count, (i) => s.get(`wal/${String(i).padStart(8, '0')}`));
    await s.close();
    return { rawWriteFlushPerSec, createPutsPerSec, overwritePutsPerSec, getsPerSec };
  },
};

const held = new Map<string, { close(): void }>();

function store(id: number): OpfsObjectStore {
  const s = stores.get(id);
  if (!s) throw new Error(`no store with id ${id}`);
  return s;
}

/** The harness API as the page sees it (through `wrap`). */
export type OpfsHarness = typeof harness;

registerTransferHandlers();
expose(harness);
