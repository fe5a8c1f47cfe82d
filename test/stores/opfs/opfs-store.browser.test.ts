/**
 * OpfsObjectStore in real Chromium. The store works only in dedicated workers, so the full
 * ObjectStore contract runs on real stores inside a module worker, driven from the page through a
 * thin proxy (opfs-worker-client.ts). Page-side tests prove the main-thread refusal.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isTaqubaError } from '../../../src/core/errors.js';
import { KvDb } from '../../../src/core/kv/index.js';
import { toOpfsError } from '../../../src/stores/opfs/opfs-errors.js';
import { OPFS_HEADER_BYTES, OpfsObjectStore } from '../../../src/stores/opfs/index.js';
import { describeObjectStoreConformance, patternBytes, rejectionCode } from '../../core/objects/object-store.conformance.js';
import { OpfsWorkerClient, type WorkerOpfsStore } from './opfs-worker-client.js';

let counter = 0;
const uniqueDir = (what: string): string => `taquba-test/${what}-${Date.now().toString(36)}-${counter++}`;
const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const fromText = (b: Uint8Array): string => new TextDecoder().decode(b);

const client = new OpfsWorkerClient();
afterAll(() => client.terminate());

async function collect(store: { list(prefix: string): AsyncIterable<{ key: string }> }, prefix = ''): Promise<string[]> {
  const keys: string[] = [];
  for await (const info of store.list(prefix)) keys.push(info.key);
  return keys;
}

/** 'ok', or the code a put was refused with (anything but a library error is rethrown). */
async function codeOrOk(put: Promise<unknown>): Promise<string> {
  try {
    await put;
    return 'ok';
  } catch (e) {
    if (isTaqubaError(e)) return e.code;
    throw e;
  }
}

async function fresh(what: string): Promise<{ store: WorkerOpfsStore; directory: string; cleanup: () => Promise<void> }> {
  const directory = uniqueDir(what);
  const store = await client.open(directory);
  return {
    store,
    directory,
    cleanup: async () => {
      await store.close();
      await client.call('deleteDirectory', directory);
    },
  };
}

describeObjectStoreConformance('opfs (sync access handles, in a dedicated worker)', () => fresh('conformance'));

describe('OpfsObjectStore on the main thread', () => {
  it('imports without touching the platform, and opening rejects with UNSUPPORTED_PLATFORM naming the worker requirement', async () => {
    const store = new OpfsObjectStore({ directory: 'taquba-test/main-thread' });
    for (const call of [() => OpfsObjectStore.open({ directory: 'taquba-test/main-thread' }), () => store.get('k'), () => store.put('k', text('x')), () => collect(store)]) {
      const e = await call().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isTaqubaError(e, 'UNSUPPORTED_PLATFORM')).toBe(true);
      expect((e as Error).message).toMatch(/dedicated worker/);
    }
    // Nothing was created on the way.
    const root = await navigator.storage.getDirectory();
    const names: string[] = [];
    for await (const name of (root as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
    expect(names.filter((n) => n.includes('main-thread'))).toEqual([]);
  });

  it('rejects where the origin private file system is missing with UNSUPPORTED_PLATFORM', async () => {
    const storage = navigator.storage;
    Object.defineProperty(storage, 'getDirectory', { value: undefined, configurable: true });
    try {
      expect(await rejectionCode(OpfsObjectStore.open({ directory: 'x' }))).toBe('UNSUPPORTED_PLATFORM');
    } finally {
      delete (storage as { getDirectory?: unknown }).getDirectory;
    }
  });

  it('rejects a malformed directory with INVALID_CONFIG', () => {
    for (const directory of ['', '/abs', 'a//b', 'a/../b', 'trailing/']) {
      expect(() => new OpfsObjectStore({ directory })).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    }
  });

  it('maps DOMExceptions to codes and keeps them as cause', () => {
    const quota = new DOMException('full', 'QuotaExceededError');
    const e = toOpfsError('put', 'key=k', quota);
    expect(isTaqubaError(e, 'STORE_PERMISSION')).toBe(true);
    expect(e.cause).toBe(quota);
    expect(isTaqubaError(toOpfsError('get', '', new DOMException('x', 'NotAllowedError')), 'STORE_PERMISSION')).toBe(true);
    for (const name of ['NoModificationAllowedError', 'NotReadableError', 'InvalidStateError', 'NotFoundError']) {
      const other = toOpfsError('put', 'key=k', new DOMException('x', name));
      expect(isTaqubaError(other, 'STORE_UNAVAILABLE')).toBe(true);
      expect((other.cause as DOMException).name).toBe(name);
    }
    const badName = toOpfsError('put', 'key=k', new TypeError('Name is not allowed.'));
    expect(isTaqubaError(badName, 'INVALID_ARGUMENT')).toBe(true);
  });
});

describe('OpfsObjectStore in a dedicated worker', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  async function open(what: string): Promise<{ store: WorkerOpfsStore; directory: string }> {
    const made = await fresh(what);
    cleanups.push(made.cleanup);
    return made;
  }

  it('runs in a worker that has sync access handles', async () => {
    expect(await client.call('platform')).toEqual({ sync: true });
  });

  it('lays keys out as nested directories with a @ suffix, escaping %, @ and a leading dot', async () => {
    const { store, directory } = await open('layout');
    await store.put('db/wal/0001', text('1'));
    await store.put('a@b/%x/.hidden', text('2'));
    await store.put('db', text('3'));
    expect(await client.call('listRaw', directory.split('/'))).toEqual(['a%40b@/', 'a%40b@/%25x@/', 'a%40b@/%25x@/%2ehidden', 'db', 'db@/', 'db@/wal@/', 'db@/wal@/0001']);
    expect(await collect(store)).toEqual(['a@b/%x/.hidden', 'db', 'db/wal/0001']);
    expect(fromText((await store.get('a@b/%x/.hidden'))!.data)).toBe('2');
  });

  it('each file is a 16-byte header (magic and version) followed by the bytes', async () => {
    const { store, directory } = await open('header');
    const { version } = await store.put('obj', text('payload'));
    expect(version).toMatch(/^[0-9a-f]{24}$/);
    expect((await store.get('obj'))!.version).toBe(version);
    const infos = [];
    for await (const info of store.list('')) infos.push(info);
    expect(infos).toEqual([{ key: 'obj', size: 7, version }]);
    expect(OPFS_HEADER_BYTES).toBe(16);
    expect(await client.call('listRaw', directory.split('/'))).toEqual(['obj']);
  });

  it('a crash before the move leaves the old object whole: temporary files are never listed or read', async () => {
    const { store, directory } = await open('crash');
    const { version } = await store.put('k/obj', text('old'));
    // What a put that died after writing its temporary file (or mid-write) leaves behind.
    await client.call('writeRaw', [...directory.split('/'), 'k@', '.tmp-deadbeef'], text('torn garbage, no header'));
    await client.call('writeRaw', [...directory.split('/'), '.tmp-0123'], new Uint8Array(3));
    expect(await store.get('k/obj')).toEqual({ data: text('old'), version });
    expect(await collect(store)).toEqual(['k/obj']);
    // The next put of the key is unaffected.
    await store.put('k/obj', text('new'), { ifMatch: version });
    expect(fromText((await store.get('k/obj'))!.data)).toBe('new');
  });

  it('opening the store removes temporary files crashed puts left behind; objects and foreign files stay', async () => {
    const { store, directory } = await open('sweep');
    const root = directory.split('/');
    const { version } = await store.put('k/obj', text('kept'));
    await store.put('top', text('also kept'));
    // What puts killed after creating their temp file leave, at every depth; and a dot file that
    // is not ours to remove.
    await client.call('writeRaw', [...root, 'k@', '.tmp-deadbeefdeadbeef'], text('torn garbage, no header'));
    await client.call('writeRaw', [...root, '.tmp-0123456789abcdef'], new Uint8Array(0));
    await client.call('writeRaw', [...root, 'deep@', 'er@', '.tmp-ffffffffffffffff'], new Uint8Array(5));
    await client.call('writeRaw', [...root, '.keep'], text('foreign'));
    // Listings never show them, from the root or from inside their directory.
    expect(await collect(store)).toEqual(['k/obj', 'top']);
    expect(await collect(store, 'k/')).toEqual(['k/obj']);
    await store.close();

    const reopened = await client.open(directory);
    try {
      expect(await client.call('listRaw', root)).toEqual(['.keep', 'deep@/', 'deep@/er@/', 'k@/', 'k@/obj', 'top']);
      expect(await reopened.get('k/obj')).toEqual({ data: text('kept'), version });
      expect(fromText((await reopened.get('top'))!.data)).toBe('also kept');
      expect(await collect(reopened)).toEqual(['k/obj', 'top']);
      // Nothing left to sweep; a new leftover is counted.
      expect(await client.call('sweepTempFiles', reopened.id)).toBe(0);
      await client.call('writeRaw', [...root, 'k@', '.tmp-0000000000000001'], new Uint8Array(1));
      expect(await client.call('sweepTempFiles', reopened.id)).toBe(1);
    } finally {
      await reopened.close();
    }
  });

  it('a sweep leaves the temporary files of puts in flight in the same worker alone', async () => {
    const { store, directory } = await open('sweep-in-flight');
    const other = await client.open(directory);
    try {
      // Puts of one key queue on its lock with their temp files written and closed: only the
      // in-flight registry keeps those from the sweeps that both stores run meanwhile.
      let settled = false;
      const puts = Promise.all(Array.from({ length: 48 }, (_, i) => store.put('p/hot', new Uint8Array(64 * 1024).fill(i)))).finally(() => (settled = true));
      const removed: number[] = [];
      while (!settled) removed.push(await client.call('sweepTempFiles', removed.length % 2 ? store.id : other.id));
      await puts;
      expect(removed.length).toBeGreaterThan(0);
      expect(removed.every((n) => n === 0)).toBe(true);
      expect(await client.call('listRaw', directory.split('/'))).toEqual(['p@/', 'p@/hot']);
    } finally {
      await other.close();
    }
  });

  it('a put leaves no temporary file behind, also when its precondition fails', async () => {
    const { store, directory } = await open('no-temp');
    await store.put('a/x', text('1'), { ifNoneMatch: '*' });
    await rejectionCode(store.put('a/x', text('2'), { ifNoneMatch: '*' }));
    await rejectionCode(store.put('a/x', text('2'), { ifMatch: 'ffffffffffffffffffffffff' }));
    expect(await client.call('listRaw', directory.split('/'))).toEqual(['a@/', 'a@/x']);
  });

  it('foreign files are skipped by name, and a file without our header reads as CORRUPT_DATA', async () => {
    const { store, directory } = await open('foreign');
    await store.put('ok', text('fine'));
    await client.call('writeRaw', [...directory.split('/'), 'a@b'], text('not ours: unescaped @'));
    await client.call('writeRaw', [...directory.split('/'), '%41'], text('not ours: non-canonical escape'));
    await client.call('writeRaw', [...directory.split('/'), 'bad'], text('no header'));
    expect(await rejectionCode(store.get('bad'))).toBe('CORRUPT_DATA');
    expect(await rejectionCode(collect(store))).toBe('CORRUPT_DATA');
    expect(await collect(store, 'o')).toEqual(['ok']);
  });

  it('reads racing with overwrites always pair bytes with their own version', async () => {
    const { store } = await open('read-race');
    const versions = new Map<string, string>();
    const first = await store.put('hot', text('v0'));
    versions.set(first.version, 'v0');
    const writes = (async () => {
      for (let i = 1; i <= 30; i++) versions.set((await store.put('hot', text(`v${i}`))).version, `v${i}`);
    })();
    const reads = (async () => {
      let seen = 0;
      for (let i = 0; i < 60; i++) {
        const got = await store.get('hot');
        if (got) {
          await writes.then(() => undefined, () => undefined).catch(() => undefined);
          seen++;
        }
      }
      return seen;
    })();
    await writes;
    expect(await reads).toBe(60);
    // Each read's bytes belong to its version (checked after the fact: versions are unique).
    for (let i = 0; i < 20; i++) {
      const got = (await store.get('hot'))!;
      expect(versions.get(got.version)).toBe(fromText(got.data));
    }
  });

  it('a put whose temporary file cannot be written fails cleanly with STORE_UNAVAILABLE and writes nothing', async () => {
    const { store, directory } = await open('locked');
    await store.put('held', text('kept'));
    // Another access handle on the target does not block a put (which writes a new temp file
    // and moves it), but the move over a locked file fails: NoModificationAllowedError.
    await client.call('holdRaw', [...directory.split('/'), 'held']);
    try {
      const e = await store.put('held', text('new')).catch((error: unknown) => error);
      expect(isTaqubaError(e, 'STORE_UNAVAILABLE')).toBe(true);
    } finally {
      await client.call('releaseRaw', [...directory.split('/'), 'held']);
    }
    expect(fromText((await store.get('held'))!.data)).toBe('kept');
    expect(await client.call('listRaw', directory.split('/'))).toEqual(['held']);
  });

  it('append logs: created create-only, appended with write + flush, read and listed as an object while open, read from another worker', async () => {
    const { store, directory } = await open('log');
    const logs = store.appendLogs!;
    const log = await logs.createLog('w/log/1');
    expect(log.size).toBe(0);
    await log.append(text('hello '));
    await log.append(text('world'));
    expect(log.size).toBe(11);
    expect(fromText((await store.get('w/log/1'))!.data)).toBe('hello world');
    expect(await collect(store, 'w/')).toEqual(['w/log/1']);
    expect(await logs.exists('w/log/1')).toBe(true);
    expect(await logs.exists('w/log/2')).toBe(false);
    expect(await rejectionCode(logs.createLog('w/log/1'))).toBe('PRECONDITION_FAILED');
    await store.put('w/plain', text('x'));
    expect(await rejectionCode(logs.createLog('w/plain'))).toBe('PRECONDITION_FAILED');
    // Another worker (another tab's writer) reads the log while this one holds it open.
    const otherClient = new OpfsWorkerClient();
    try {
      const other = await otherClient.open(directory);
      expect(fromText((await other.get('w/log/1'))!.data)).toBe('hello world');
      await other.close();
    } finally {
      otherClient.terminate();
    }
    await log.close();
    expect(await rejectionCode(log.append(text('late')))).toBe('STORE_UNAVAILABLE');
    expect(fromText((await store.get('w/log/1'))!.data)).toBe('hello world');
  });

  it('seal flags: created create-only and held open, raised from another worker while held, read as an object, raising an absent one is a no-op', async () => {
    const { store, directory } = await open('flag');
    const flags = store.appendLogs!.flags!;
    const flag = await flags.create('w/log-flag/1');
    // Chromium knows 'readwrite-unsafe' (121+): the flag is held, not left to lookups.
    expect(flag).toBeDefined();
    expect(await flag!.raised()).toBe(false);
    expect((await store.get('w/log-flag/1'))!.data).toEqual(new Uint8Array(0));
    expect(await rejectionCode(flags.create('w/log-flag/1'))).toBe('PRECONDITION_FAILED');
    // Another worker (a newer writer in another tab) raises it while this one holds it open.
    const otherClient = new OpfsWorkerClient();
    try {
      const other = await otherClient.open(directory);
      await other.appendLogs!.flags!.raise('w/log-flag/1');
      await other.appendLogs!.flags!.raise('w/log-flag/absent');
      await other.close();
    } finally {
      otherClient.terminate();
    }
    expect(await flag!.raised()).toBe(true);
    expect((await store.get('w/log-flag/1'))!.data).toEqual(Uint8Array.of(1));
    expect(await store.get('w/log-flag/absent')).toBeUndefined();
    await flag!.close();
    await flag!.close();
    expect(await rejectionCode(flag!.raised())).toBe('STORE_UNAVAILABLE');
    // Raised again with nobody holding it: still one byte, still raised.
    await flags.raise('w/log-flag/1');
    expect((await store.get('w/log-flag/1'))!.data).toEqual(Uint8Array.of(1));
  });

  // Issue 24: a string, an ArrayBuffer or a Uint16Array was appended as whatever write() made of it.
  it('append logs refuse data that is not a Uint8Array with INVALID_ARGUMENT, writing nothing', async () => {
    const { store } = await open('log-bad');
    const log = await store.appendLogs!.createLog('w/log');
    await log.append(text('ok'));
    const notBytes: [string, unknown][] = [
      ['string', 'text'],
      ['ArrayBuffer', new ArrayBuffer(4)],
      ['Uint16Array', new Uint16Array([1, 2])],
      ['DataView', new DataView(new ArrayBuffer(4))],
      ['Array', [1, 2]],
      ['number', 7],
      ['null', null],
    ];
    for (const [got, data] of notBytes) {
      const error = await log.append(data as Uint8Array).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isTaqubaError(error, 'INVALID_ARGUMENT'), `append of ${got}: ${String(error)}`).toBe(true);
      expect((error as Error).message).toBe(`append data must be a Uint8Array. key=w/log got=${got}`);
    }
    expect(fromText((await store.get('w/log'))!.data)).toBe('ok');
    await log.append(text('!')); // the log is still usable
    expect(fromText((await store.get('w/log'))!.data)).toBe('ok!');
    await log.close();
  });

  it('two stores on one directory in one worker share the per-key lock: 16 racing create-only puts, one winner', async () => {
    const { store, directory } = await open('two');
    const other = await client.open(directory);
    try {
      const results = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => (i % 2 ? other : store).put('once', text(`w${i}`), { ifNoneMatch: '*' })));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it('stores in two workers share the per-key lock: racing create-only puts and compare-and-swaps have one winner each', async () => {
    const { store, directory } = await open('two-workers');
    const second = new OpfsWorkerClient();
    const other = await second.open(directory);
    try {
      const keys = Array.from({ length: 40 }, (_, i) => `race/${i}`);
      const creates = await Promise.all(
        keys.map((key) => Promise.all([store, other].map((s, w) => codeOrOk(s.put(key, text(`w${w}`), { ifNoneMatch: '*' }))))),
      );
      for (const [i, codes] of creates.entries()) {
        expect(codes.filter((c) => c === 'ok'), `${keys[i]}: exactly one create wins, got ${codes.join(',')}`).toHaveLength(1);
        expect(codes.filter((c) => c !== 'ok'), `${keys[i]}: the loser is refused`).toEqual(['PRECONDITION_FAILED']);
      }
      // Compare-and-swap from the version both read: one swap wins, the other is refused.
      const swaps = await Promise.all(
        keys.map(async (key) => {
          const { version } = (await store.get(key))!;
          return Promise.all([store, other].map((s, w) => codeOrOk(s.put(key, text(`s${w}`), { ifMatch: version }))));
        }),
      );
      for (const [i, codes] of swaps.entries()) {
        expect(codes.filter((c) => c === 'ok'), `${keys[i]}: exactly one swap wins, got ${codes.join(',')}`).toHaveLength(1);
        expect(codes.filter((c) => c !== 'ok')).toEqual(['PRECONDITION_FAILED']);
      }
    } finally {
      await other.close();
      second.terminate();
    }
  });

  it('after close() calls reject with CLOSED', async () => {
    const { store } = await open('close');
    await store.put('k', text('v'));
    await store.close();
    expect(await rejectionCode(store.get('k'))).toBe('CLOSED');
    expect(await rejectionCode(store.put('k', text('v')))).toBe('CLOSED');
  });

  describe('quota', () => {
    // A storage bucket has its own quota (and a fresh quota cache), so exhaustion is real and
    // immediate; the worker opens the store on the bucket's OPFS root.
    async function openInBucket(quota: number): Promise<WorkerOpfsStore> {
      const bucket = `opfs-quota-${Date.now().toString(36)}-${counter++}`;
      const store = await client.open('quota', { name: bucket, quota });
      cleanups.push(async () => {
        await store.close();
        await client.call('deleteDirectory', 'quota', bucket);
      });
      return store;
    }

    it('a real quota exhaustion rejects the put with STORE_PERMISSION (DOMException cause), leaves no trace, and reads go on', async () => {
      const store = await openInBucket(256 * 1024);
      await store.put('before', text('ok'));
      // Regression: Chromium 153's write() does not throw here; it writes what fits and returns
      // -8 as an unsigned count. Trusting the count moved a torn file into place.
      const e = await store.put('huge', patternBytes(400 * 1024, 5)).catch((error: unknown) => error);
      expect(isTaqubaError(e, 'STORE_PERMISSION')).toBe(true);
      expect(((e as Error).cause as DOMException).name).toBe('QuotaExceededError');
      expect(await store.get('huge')).toBeUndefined();
      expect(await collect(store)).toEqual(['before']);
      expect(fromText((await store.get('before'))!.data)).toBe('ok');
      // The failed temp file was removed, so the space is free again.
      await store.put('after', patternBytes(100 * 1024, 6));
    });

    it('the engine on a full store fails with STORE_PERMISSION, then CLOSED (reason failed); every acknowledged commit stays readable', async () => {
      const store = await openInBucket(1024 * 1024);
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
      const reader = await KvDb.openReader(store);
      for (const i of acked) expect(await reader.get(text(`k${String(i).padStart(3, '0')}`))).toEqual(patternBytes(16 * 1024, i + 1));
      await reader.close();
    });
  });
});
