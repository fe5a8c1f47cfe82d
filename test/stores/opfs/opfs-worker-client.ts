/**
 * Page side of the OPFS worker harness: `WorkerOpfsStore` is an ObjectStore whose every call runs
 * on a real OpfsObjectStore inside a dedicated worker, so the shared suites (conformance, KV
 * engine) exercise the sync-access-handle path unchanged. Errors come back as TaqubaErrors with
 * their code, details and a DOMException cause of the same name.
 */
import { TaqubaError } from '../../../src/core/errors.js';
import type { GetOptions, ListOptions, ObjectInfo, ObjectStore, ObjectVersion, PutOptions, StoredObject } from '../../../src/core/objects/object-store.js';
import type { HarnessRequest, HarnessResponse, WireError } from './opfs-worker-protocol.js';

function fromWire(wire: WireError): Error {
  const cause = wire.cause === undefined ? undefined : new DOMException(wire.cause.message, wire.cause.name);
  const e = wire.code ? new TaqubaError(wire.code, wire.message, { details: wire.details, cause }) : new Error(wire.message, { cause });
  e.name = wire.name;
  return e;
}

export class OpfsWorkerClient {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  private nextId = 1;

  constructor() {
    this.worker = new Worker(new URL('./opfs-worker-harness.ts', import.meta.url), { type: 'module' });
    this.worker.onmessage = (event: MessageEvent<HarnessResponse>) => {
      const response = event.data;
      const waiter = this.pending.get(response.id);
      this.pending.delete(response.id);
      if (response.ok) waiter?.resolve(response.result);
      else waiter?.reject(fromWire(response.error));
    };
    this.worker.onerror = (event) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`worker error: ${event.message}`));
      this.pending.clear();
    };
  }

  call<T>(op: string, ...args: unknown[]): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, op, args } satisfies HarnessRequest);
    });
  }

  /** Opens an OpfsObjectStore on `directory` in the worker (optionally in a storage bucket with a quota). */
  async open(directory: string, bucket?: { name: string; quota: number }): Promise<WorkerOpfsStore> {
    return new WorkerOpfsStore(this, await this.call<number>('open', directory, bucket));
  }

  terminate(): void {
    this.worker.terminate();
  }
}

export class WorkerOpfsStore implements ObjectStore {
  constructor(
    readonly client: OpfsWorkerClient,
    readonly id: number,
  ) {}

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
    const iterId = await this.client.call<number>('listOpen', this.id, prefix, options);
    let done = false;
    try {
      while (!done) {
        const page = await this.client.call<{ items: ObjectInfo[]; done: boolean }>('listNext', iterId, 64);
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
