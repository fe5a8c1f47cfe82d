/**
 * Page side of the OPFS worker harness: `WorkerOpfsStore` is an ObjectStore whose every call runs
 * on a real OpfsObjectStore inside a dedicated worker, so the shared suites (conformance, KV
 * engine) exercise the sync-access-handle path unchanged. The worker is wrapped with Comlink and
 * the library's transfer handlers, so errors come back as TaqubaErrors of the right class with
 * their code, details and cause chain (a DOMException cause keeps its name).
 */
import { wrap, type Remote } from 'comlink';
import { registerTransferHandlers } from '../../../src/browser/transfer-handlers.js';
import type { AppendLogStore } from '../../../src/core/objects/append-log.js';
import type { GetOptions, ListOptions, ObjectInfo, ObjectStore, ObjectVersion, PutOptions, StoredObject } from '../../../src/core/objects/object-store.js';
import type { OpfsHarness } from './opfs-worker-harness.js';

type Op = keyof OpfsHarness;

export class OpfsWorkerClient {
  private readonly worker: Worker;
  /** The harness object in the worker. */
  readonly remote: Remote<OpfsHarness>;

  constructor() {
    registerTransferHandlers();
    this.worker = new Worker(new URL('./opfs-worker-harness.ts', import.meta.url), { type: 'module' });
    this.remote = wrap<OpfsHarness>(this.worker);
  }

  /** Calls the harness operation `op` in the worker. */
  call<K extends Op>(op: K, ...args: Parameters<OpfsHarness[K]>): Promise<Awaited<ReturnType<OpfsHarness[K]>>> {
    const fn = this.remote[op] as unknown as (...a: Parameters<OpfsHarness[K]>) => Promise<Awaited<ReturnType<OpfsHarness[K]>>>;
    return fn(...args);
  }

  /** Opens an OpfsObjectStore on `directory` in the worker (optionally in a storage bucket with a quota). */
  async open(directory: string, bucket?: { name: string; quota: number }, options?: { readonly appendLogs?: boolean }): Promise<WorkerOpfsStore> {
    return new WorkerOpfsStore(this, await this.call('open', directory, bucket), options);
  }

  terminate(): void {
    this.worker.terminate();
  }
}

export class WorkerOpfsStore implements ObjectStore {
  /** The worker store's append logs, each log held open in the worker (undefined with `appendLogs: false`). */
  readonly appendLogs: AppendLogStore | undefined;

  constructor(
    readonly client: OpfsWorkerClient,
    readonly id: number,
    options: { readonly appendLogs?: boolean } = {},
  ) {
    this.appendLogs = options.appendLogs === false ? undefined : {
      createLog: async (key) => {
        const logId = await client.call('createLog', id, key);
        let size = 0;
        return {
          key,
          get size() {
            return size;
          },
          append: async (data) => {
            size = await client.call('appendLog', logId, data);
          },
          close: () => client.call('closeLog', logId),
        };
      },
      exists: (key) => client.call('logExists', id, key),
      // The flag is read in the worker (a round trip from here, a local read there).
      flags: {
        create: async (key) => {
          const flagId = await client.call('createFlag', id, key);
          if (flagId === undefined) return undefined;
          return { raised: () => client.call('flagRaised', flagId), close: () => client.call('closeFlag', flagId) };
        },
        raise: (key) => client.call('raiseFlag', id, key),
      },
    };
  }

  get(key: string, options?: GetOptions): Promise<StoredObject | undefined> {
    return this.client.call('get', this.id, key, options);
  }

  put(key: string, data: Uint8Array, options?: PutOptions): Promise<{ version: ObjectVersion }> {
    return this.client.call('put', this.id, key, data, options);
  }

  delete(key: string): Promise<void> {
    return this.client.call('delete', this.id, key);
  }

  async *list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> {
    const iterId = await this.client.call('listOpen', this.id, prefix, options);
    let done = false;
    try {
      while (!done) {
        const page = await this.client.call('listNext', iterId, 64);
        done = page.done;
        yield* page.items;
      }
    } finally {
      if (!done) await this.client.call('listClose', iterId);
    }
  }

  close(): Promise<void> {
    return this.client.call('close', this.id);
  }
}
