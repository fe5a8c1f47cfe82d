/**
 * Proves the platform-neutral core runs unchanged in real Chromium: the reference object store,
 * WebCrypto hashing, the MessagePack record codec, and the KV engine over the memory store.
 */
import { describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../src/core/bytes.js';
import { decodeRecord, encodeRecord } from '../../src/core/codec.js';
import { isTaqubaError, PreconditionFailedError } from '../../src/core/errors.js';
import { sha256, sha256Hex } from '../../src/core/hash.js';
import { KvDb } from '../../src/core/kv/kv-db.js';
import { MemoryObjectStore } from '../../src/core/objects/memory-store.js';

describe('core in Chromium', () => {
  it('runs in a real browser page', () => {
    expect(typeof window).toBe('object');
    expect(navigator.userAgent).toMatch(/Chrom/);
    expect(typeof indexedDB.open).toBe('function');
    expect(typeof crypto.subtle.digest).toBe('function');
  });

  it('MemoryObjectStore: put, get, range get, list, delete', async () => {
    const store = new MemoryObjectStore();
    expect(await store.get('a/missing')).toBeUndefined();

    const { version: v1 } = await store.put('db/wal/2', utf8('two'));
    await store.put('db/wal/1', utf8('one'));
    await store.put('db/manifest', utf8('m'));
    await store.put('other/x', utf8('x'));

    const got = await store.get('db/wal/2');
    expect(got && fromUtf8(got.data)).toBe('two');
    expect(got?.version).toBe(v1);
    const range = await store.get('db/wal/2', { range: { offset: 1, length: 10 } });
    expect(range && fromUtf8(range.data)).toBe('wo');

    const keys: string[] = [];
    for await (const info of store.list('db/')) keys.push(info.key);
    expect(keys).toEqual(['db/manifest', 'db/wal/1', 'db/wal/2']);
    const after: string[] = [];
    for await (const info of store.list('db/wal/', { startAfter: 'db/wal/1' })) after.push(info.key);
    expect(after).toEqual(['db/wal/2']);

    // Returned bytes are copies: mutating them does not change the store.
    got!.data[0] = 0;
    expect(fromUtf8((await store.get('db/wal/2'))!.data)).toBe('two');

    await store.delete('db/wal/1');
    await store.delete('db/wal/1');
    expect(await store.get('db/wal/1')).toBeUndefined();
  });

  it('MemoryObjectStore: create-only and compare-and-swap preconditions', async () => {
    const store = new MemoryObjectStore();
    const { version: v1 } = await store.put('k', utf8('1'), { ifNoneMatch: '*' });
    const created = store.put('k', utf8('2'), { ifNoneMatch: '*' });
    await expect(created).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(created.catch((e: unknown) => isTaqubaError(e, 'PRECONDITION_FAILED'))).resolves.toBe(true);

    const { version: v2 } = await store.put('k', utf8('2'), { ifMatch: v1 });
    expect(v2).not.toBe(v1);
    await expect(store.put('k', utf8('3'), { ifMatch: v1 })).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
    await expect(store.put('absent', utf8('3'), { ifMatch: v1 })).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
    expect(fromUtf8((await store.get('k'))!.data)).toBe('2');

    await expect(store.get('../escape')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('hashes with crypto.subtle SHA-256', async () => {
    expect(await sha256Hex(utf8(''))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(await sha256Hex(utf8('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect((await sha256(new Uint8Array(1000))).length).toBe(32);
  });

  it('round-trips records through the msgpack codec', () => {
    const record = { id: 'job-1', attempt: 3, payload: new Uint8Array([0, 1, 255]), tags: ['a', 'b'], big: 2 ** 53 - 1, nested: { ok: true, none: null } };
    const bytes = encodeRecord({ ...record, dropped: undefined });
    expect(bytes).toBeInstanceOf(Uint8Array);
    const back = decodeRecord(bytes) as Record<string, unknown>;
    expect(back).toEqual(record);
    expect('dropped' in back).toBe(false);
  });
});

describe('KV engine in Chromium', () => {
  const key = (i: number) => utf8(`k/${String(i).padStart(4, '0')}`);
  const value = (i: number) => utf8(`value ${i}`);

  it('writes, reads back, and reads back again after a reopen', async () => {
    const store = new MemoryObjectStore();
    const db = await KvDb.open(store);
    await db.transaction(async (txn) => {
      txn.put(utf8('hello'), utf8('world'));
      txn.put(utf8('gone'), utf8('soon'));
    });
    await db.transaction((txn) => txn.delete(utf8('gone')));
    expect(fromUtf8((await db.get(utf8('hello')))!)).toBe('world');
    expect(await db.get(utf8('gone'))).toBeUndefined();
    await db.close();

    const reopened = await KvDb.open(store);
    expect(fromUtf8((await reopened.get(utf8('hello')))!)).toBe('world');
    expect(await reopened.get(utf8('gone'))).toBeUndefined();
    await reopened.close();
  });

  it('survives a reopen after flushing to sorted tables', async () => {
    const store = new MemoryObjectStore();
    const db = await KvDb.open(store, { memtableBytes: 1024, blockBytes: 256 });
    for (let batch = 0; batch < 10; batch++) {
      await db.transaction((txn) => {
        for (let i = batch * 30; i < (batch + 1) * 30; i++) txn.put(key(i), value(i));
      });
    }
    await db.close();

    const objects: string[] = [];
    for await (const info of store.list('kv/')) objects.push(info.key);
    expect(objects.some((k) => k.startsWith('kv/sst/'))).toBe(true);

    const reopened = await KvDb.open(store, { memtableBytes: 1024, blockBytes: 256 });
    expect(fromUtf8((await reopened.get(key(0)))!)).toBe('value 0');
    expect(fromUtf8((await reopened.get(key(299)))!)).toBe('value 299');
    const keys: string[] = [];
    for await (const e of reopened.scan({ prefix: utf8('k/') })) keys.push(fromUtf8(e.key));
    expect(keys).toHaveLength(300);
    expect(keys[0]).toBe('k/0000');
    expect(keys.at(-1)).toBe('k/0299');
    await reopened.close();
  });
});
