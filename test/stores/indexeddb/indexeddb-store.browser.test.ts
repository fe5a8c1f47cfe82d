/**
 * IndexedDbObjectStore in real Chromium: the full ObjectStore contract, plus what only this
 * adapter has (inline vs Blob storage, a shared database between instances, deletion, closing,
 * DOMException mapping, and a real QuotaExceededError under a quota override).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isTaqubaError } from '../../../src/core/errors.js';
import { KvDb } from '../../../src/core/kv/index.js';
import { FaultyObjectStore } from '../../../src/testing/faulty-store.js';
import { toIndexedDbError } from '../../../src/stores/indexeddb/indexeddb-errors.js';
import { IndexedDbObjectStore, INLINE_MAX_BYTES, indexedDbDatabaseName } from '../../../src/stores/indexeddb/index.js';
import { describeObjectStoreConformance, patternBytes, rejectionCode } from '../../core/objects/object-store.conformance.js';

let counter = 0;
const uniqueName = (what: string): string => `test-${what}-${Date.now().toString(36)}-${counter++}`;
const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const fromText = (b: Uint8Array): string => new TextDecoder().decode(b);

async function fresh(what: string): Promise<{ store: IndexedDbObjectStore; name: string; cleanup: () => Promise<void> }> {
  const name = uniqueName(what);
  const store = await IndexedDbObjectStore.open({ name });
  return {
    store,
    name,
    cleanup: async () => {
      await store.close();
      await IndexedDbObjectStore.deleteDatabase(name);
    },
  };
}

describeObjectStoreConformance('indexeddb', () => fresh('conformance'));

describe('IndexedDbObjectStore', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  async function open(what: string): Promise<{ store: IndexedDbObjectStore; name: string }> {
    const made = await fresh(what);
    cleanups.push(made.cleanup);
    return made;
  }

  it('keeps one database per store name, named taquba:<name>', async () => {
    const { name } = await open('dbname');
    const names = (await indexedDB.databases()).map((d) => d.name);
    expect(names).toContain(indexedDbDatabaseName(name));
    expect(indexedDbDatabaseName(name)).toBe(`taquba:${name}`);
  });

  it('stores objects above INLINE_MAX_BYTES as Blobs and objects up to it inline; both round-trip and read ranges', async () => {
    const { store, name } = await open('blob');
    const small = patternBytes(INLINE_MAX_BYTES, 3);
    const large = patternBytes(INLINE_MAX_BYTES + 1, 4);
    await store.put('inline', small);
    await store.put('blob', large);

    // Look at the raw records to prove the storage choice.
    const raw = await new Promise<Record<string, unknown>[]>((resolve, reject) => {
      const req = indexedDB.open(indexedDbDatabaseName(name));
      req.onsuccess = () => {
        const get = req.result.transaction('objects').objectStore('objects').getAll();
        get.onsuccess = () => {
          req.result.close();
          resolve(get.result as Record<string, unknown>[]);
        };
        get.onerror = () => reject(get.error);
      };
      req.onerror = () => reject(req.error);
    });
    const byKey = Object.fromEntries(raw.map((r) => [r.key, r]));
    expect(byKey.inline.data).toBeInstanceOf(Uint8Array);
    expect(byKey.blob.data).toBeInstanceOf(Blob);
    expect(byKey.blob.size).toBe(INLINE_MAX_BYTES + 1);

    expect((await store.get('blob'))!.data).toEqual(large);
    expect((await store.get('blob', { range: { offset: INLINE_MAX_BYTES - 2, length: 10 } }))!.data).toEqual(large.slice(INLINE_MAX_BYTES - 2));
    expect((await store.get('inline', { range: { offset: 5, length: 3 } }))!.data).toEqual(small.slice(5, 8));
  });

  it('two instances on one name share objects and preconditions', async () => {
    const { store: a, name } = await open('shared');
    const b = await IndexedDbObjectStore.open({ name });
    try {
      const { version } = await a.put('k', text('from a'), { ifNoneMatch: '*' });
      expect(await rejectionCode(b.put('k', text('from b'), { ifNoneMatch: '*' }))).toBe('PRECONDITION_FAILED');
      const v2 = (await b.put('k', text('b wins'), { ifMatch: version })).version;
      expect(await rejectionCode(a.put('k', text('stale'), { ifMatch: version }))).toBe('PRECONDITION_FAILED');
      expect(await a.get('k')).toEqual({ data: text('b wins'), version: v2 });
    } finally {
      await b.close();
    }
  });

  it('16 concurrent create-only puts from 4 instances: exactly one wins', async () => {
    const { name } = await open('race');
    const stores = await Promise.all(Array.from({ length: 4 }, () => IndexedDbObjectStore.open({ name })));
    try {
      const results = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => stores[i % 4].put('once', text(`w${i}`), { ifNoneMatch: '*' })));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('a Blob-backed object read while it is replaced and deleted still returns whole bytes of one version', async () => {
    const { store } = await open('blob-race');
    const first = patternBytes(2 * INLINE_MAX_BYTES, 11);
    const second = patternBytes(2 * INLINE_MAX_BYTES, 12);
    await store.put('big', first);
    const reads = Array.from({ length: 8 }, () => store.get('big', { range: { offset: 1000, length: 4096 } }));
    await store.put('big', second);
    await store.delete('big');
    for (const got of await Promise.all(reads)) {
      if (got === undefined) continue;
      const d = got.data;
      expect([first.slice(1000, 5096), second.slice(1000, 5096)]).toContainEqual(d);
    }
  });

  it('lists across page boundaries in order, lazily', async () => {
    const { store } = await open('pages');
    const keys = Array.from({ length: 150 }, (_, i) => `p/${String((i * 7919) % 150).padStart(3, '0')}`);
    for (const key of keys) await store.put(key, text(key));
    await store.put('q/after', text('x'));
    const listed: string[] = [];
    for await (const info of store.list('p/')) listed.push(info.key);
    expect(listed).toEqual([...keys].sort());
    const after: string[] = [];
    for await (const info of store.list('p/', { startAfter: 'p/063' })) after.push(info.key);
    expect(after).toEqual([...keys].sort().filter((k) => k > 'p/063'));
    // Breaking out early leaves nothing open: the store still writes.
    for await (const _ of store.list('')) break;
    await store.put('p/000', text('again'));
  });

  it('lists keys containing U+FFFF under a prefix ending in U+FFFF', async () => {
    const { store } = await open('ffff');
    for (const key of ['a\uffff', 'a\uffff\uffff', 'a\uffffz', 'b', 'a']) await store.put(key, text(key));
    const listed: string[] = [];
    for await (const info of store.list('a\uffff')) listed.push(info.key);
    expect(listed).toEqual(['a\uffff', 'a\uffffz', 'a\uffff\uffff']);
  });

  it('after close() calls reject with CLOSED; a new instance sees the data', async () => {
    const { store, name } = await open('close');
    await store.put('kept', text('yes'));
    await store.close();
    await store.close();
    expect(await rejectionCode(store.get('kept'))).toBe('CLOSED');
    expect(await rejectionCode(store.put('x', text('x')))).toBe('CLOSED');
    const again = await IndexedDbObjectStore.open({ name });
    expect(fromText((await again.get('kept'))!.data)).toBe('yes');
    await again.close();
  });

  it('deleteDatabase removes every object even while an instance is open; that instance reopens empty', async () => {
    const { store, name } = await open('delete');
    await store.put('gone', text('soon'));
    await IndexedDbObjectStore.deleteDatabase(name);
    expect(await store.get('gone')).toBeUndefined();
    await store.put('new', text('n'));
    expect(fromText((await store.get('new'))!.data)).toBe('n');
  });

  it('rejects a missing name with INVALID_CONFIG', () => {
    expect(() => new IndexedDbObjectStore({ name: '' })).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
  });

  it('opening where indexedDB is missing rejects with UNSUPPORTED_PLATFORM', async () => {
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'indexedDB')!;
    Object.defineProperty(globalThis, 'indexedDB', { value: undefined, configurable: true });
    try {
      const store = new IndexedDbObjectStore({ name: 'nowhere' });
      expect(await rejectionCode(IndexedDbObjectStore.open({ name: 'nowhere' }))).toBe('UNSUPPORTED_PLATFORM');
      expect(await rejectionCode(store.get('k'))).toBe('UNSUPPORTED_PLATFORM');
    } finally {
      Object.defineProperty(globalThis, 'indexedDB', descriptor);
    }
  });

  describe('errors', () => {
    it('maps QuotaExceededError to STORE_PERMISSION keeping the DOMException as cause', () => {
      const quota = new DOMException('quota full', 'QuotaExceededError');
      const e = toIndexedDbError('put', 'key=k', quota);
      expect(isTaqubaError(e, 'STORE_PERMISSION')).toBe(true);
      expect(e.cause).toBe(quota);
      expect((e as unknown as { details: Record<string, unknown> }).details).toMatchObject({ op: 'put', name: 'QuotaExceededError' });
      for (const name of ['NotAllowedError', 'SecurityError']) expect(isTaqubaError(toIndexedDbError('open', '', new DOMException('x', name)), 'STORE_PERMISSION')).toBe(true);
      for (const name of ['AbortError', 'UnknownError', 'InvalidStateError', 'NotReadableError']) {
        const other = toIndexedDbError('get', 'key=k', new DOMException('x', name));
        expect(isTaqubaError(other, 'STORE_UNAVAILABLE')).toBe(true);
        expect((other.cause as DOMException).name).toBe(name);
      }
    });

    /*
     * Real QuotaExceededErrors from Chromium's backing store. The origin's quota is cached for
     * ~30 s by a database's bucket context (other test files keep it alive), so a quota override
     * over CDP comes too late here. A storage bucket has its own quota and its own context: the
     * store is opened on it by swapping the global factory while it opens (this realm only).
     */
    async function openInBucket(quota: number): Promise<{ store: IndexedDbObjectStore; dispose: () => Promise<void> }> {
      const buckets = (navigator as unknown as { storageBuckets: StorageBuckets }).storageBuckets;
      const bucketName = `quota-${Date.now().toString(36)}-${counter++}`;
      const bucket = await buckets.open(bucketName, { quota });
      const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'indexedDB')!;
      Object.defineProperty(globalThis, 'indexedDB', { value: bucket.indexedDB, configurable: true });
      try {
        const store = await IndexedDbObjectStore.open({ name: 'quota' });
        return { store, dispose: async () => (await store.close(), await buckets.delete(bucketName)) };
      } finally {
        Object.defineProperty(globalThis, 'indexedDB', descriptor);
      }
    }
    interface StorageBuckets {
      open(name: string, options: { quota: number }): Promise<{ indexedDB: IDBFactory }>;
      delete(name: string): Promise<void>;
    }

    it('a real quota exhaustion rejects the put with STORE_PERMISSION, writes nothing, and reads go on', async () => {
      const { store, dispose } = await openInBucket(256 * 1024);
      cleanups.push(dispose);
      await store.put('before', text('ok'));
      const e = await store.put('huge', patternBytes(400 * 1024, 5)).catch((error: unknown) => error);
      expect(isTaqubaError(e, 'STORE_PERMISSION')).toBe(true);
      expect((e as Error).cause).toBeInstanceOf(DOMException);
      expect(((e as Error).cause as DOMException).name).toBe('QuotaExceededError');
      expect(await store.get('huge')).toBeUndefined();
      // Reads keep working. (Writes may keep failing: Chromium still counts the aborted bytes.)
      expect(fromText((await store.get('before'))!.data)).toBe('ok');
      const listed: string[] = [];
      for await (const info of store.list('')) listed.push(info.key);
      expect(listed).toEqual(['before']);
    });

    it('the engine on a full store fails with STORE_PERMISSION, then CLOSED (reason failed); every acknowledged commit stays readable', async () => {
      const { store, dispose } = await openInBucket(1024 * 1024);
      cleanups.push(dispose);
      const db = await KvDb.open(store);
      const acked: number[] = [];
      let failure: unknown;
      for (let i = 0; i < 200 && failure === undefined; i++) {
        await db.write([{ type: 'put', key: text(`k${String(i).padStart(3, '0')}`), value: patternBytes(16 * 1024, i + 1) }]).then(
          () => acked.push(i),
          (e: unknown) => (failure = e),
        );
      }
      expect(isTaqubaError(failure, 'STORE_PERMISSION')).toBe(true);
      expect(acked.length).toBeGreaterThan(0);
      const closed = await db.get(text('k000')).catch((e: unknown) => e);
      expect(isTaqubaError(closed, 'CLOSED')).toBe(true);
      expect((closed as { details: { reason: string } }).details.reason).toBe('failed');
      await db.close().catch(() => undefined);
      // A reader never writes, so it opens on the full store and sees every acknowledged commit.
      const reader = await KvDb.openReader(store);
      for (const i of acked) expect(await reader.get(text(`k${String(i).padStart(3, '0')}`))).toEqual(patternBytes(16 * 1024, i + 1));
      await reader.close();
    });

    it('the engine fails (CLOSED, reason failed) when a WAL put is refused with the mapped STORE_PERMISSION, and keeps what it acknowledged', async () => {
      const { store: base } = await open('engine-quota');
      const store = new FaultyObjectStore(base);
      const db = await KvDb.open(store);
      await db.write([{ type: 'put', key: text('acked'), value: text('1') }]);
      store.addRule({
        type: 'fail',
        ops: ['put'],
        keyPrefix: 'kv/wal/',
        error: (call) => toIndexedDbError('put', `key=${call.key}`, new DOMException('quota', 'QuotaExceededError')),
      });
      const failed = await rejectionCode(db.write([{ type: 'put', key: text('lost'), value: text('1') }]));
      expect(failed).toBe('STORE_PERMISSION');
      const closed = await db.get(text('acked')).catch((e: unknown) => e);
      expect(isTaqubaError(closed, 'CLOSED')).toBe(true);
      expect((closed as { details: { reason: string } }).details.reason).toBe('failed');
      await db.close();
      store.clearRules();
      const reopened = await KvDb.open(store);
      expect(fromText((await reopened.get(text('acked')))!)).toBe('1');
      expect(await reopened.get(text('lost'))).toBeUndefined();
      await reopened.close();
    });
  });
});
