/**
 * The ObjectStore contract as a reusable vitest suite. Every adapter (memory, filesystem,
 * IndexedDB, OPFS, S3) registers it with its own factory. Keep it platform-neutral: only vitest
 * APIs that also work in browser mode, no Node modules, no Math.random.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isTaqubaError, type ErrorCode } from '../../../src/core/errors.js';
import { deleteObjects } from '../../../src/core/objects/delete-objects.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';

export interface ConformanceStore {
  store: ObjectStore;
  cleanup?: () => Promise<void>;
}

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const fromText = (b: Uint8Array): string => new TextDecoder().decode(b);

/** Deterministic pseudo-random bytes (xorshift32), so failures reproduce. */
export function patternBytes(length: number, seed = 0x9e3779b9): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

/** Awaits `promise` and returns the library error code it rejected with. */
export async function rejectionCode(promise: Promise<unknown>): Promise<ErrorCode> {
  try {
    await promise;
  } catch (e) {
    if (isTaqubaError(e)) return e.code;
    throw e;
  }
  throw new Error('expected a rejection');
}

function firstDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

async function collect(iterable: AsyncIterable<{ key: string }>): Promise<string[]> {
  const keys: string[] = [];
  for await (const info of iterable) keys.push(info.key);
  return keys;
}

/** Registers the full ObjectStore contract; `makeStore` must return a fresh, empty store. */
export function describeObjectStoreConformance(name: string, makeStore: () => Promise<ConformanceStore>): void {
  describe(`ObjectStore conformance: ${name}`, () => {
    let store: ObjectStore;
    let cleanup: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      ({ store, cleanup } = await makeStore());
    });
    afterEach(async () => {
      await cleanup?.();
    });

    describe('get and put', () => {
      it('get of an absent key is undefined', async () => {
        expect(await store.get('missing/key')).toBeUndefined();
      });

      it('round-trips binary data with the version put returned', async () => {
        const data = new Uint8Array([0, 1, 2, 255, 254, 0, 10, 13]);
        const { version } = await store.put('bin/one', data);
        const got = await store.get('bin/one');
        expect(got?.data).toEqual(data);
        expect(got?.version).toBe(version);
      });

      it('round-trips an empty object', async () => {
        await store.put('empty', new Uint8Array(0));
        const got = await store.get('empty');
        expect(got).toBeDefined();
        expect(got?.data.length).toBe(0);
      });

      it('round-trips a 5 MiB object', async () => {
        const data = patternBytes(5 * 1024 * 1024);
        await store.put('big/object', data);
        const got = await store.get('big/object');
        expect(got?.data.length).toBe(data.length);
        // Element-wise toEqual on 5 MiB is slow; compare directly and report the first difference.
        expect(firstDifference(got!.data, data)).toBe(-1);
      });

      it('keeps its own copy: mutating the input or the result never changes stored bytes', async () => {
        const input = text('hello');
        await store.put('copy', input);
        input[0] = 0;
        const first = await store.get('copy');
        first!.data[1] = 0;
        expect(fromText((await store.get('copy'))!.data)).toBe('hello');
      });

      it('changes the version on every put, even with identical bytes', async () => {
        const seen = new Set<string>();
        for (let i = 0; i < 5; i++) seen.add((await store.put('v', text('same'))).version);
        expect(seen.size).toBe(5);
        expect((await store.get('v'))?.version).toBe([...seen][4]);
      });

      it('stores a key and a key below it side by side', async () => {
        await store.put('a/b', text('file'));
        await store.put('a/b/c', text('below'));
        expect(fromText((await store.get('a/b'))!.data)).toBe('file');
        expect(fromText((await store.get('a/b/c'))!.data)).toBe('below');
      });
    });

    describe('conditional puts', () => {
      it('ifNoneMatch creates once; the second fails with PRECONDITION_FAILED and changes nothing', async () => {
        const { version } = await store.put('c/once', text('first'), { ifNoneMatch: '*' });
        expect(await rejectionCode(store.put('c/once', text('second'), { ifNoneMatch: '*' }))).toBe('PRECONDITION_FAILED');
        const got = await store.get('c/once');
        expect(fromText(got!.data)).toBe('first');
        expect(got!.version).toBe(version);
      });

      it('ifMatch replaces only the matching version', async () => {
        const v1 = (await store.put('c/cas', text('1'))).version;
        const v2 = (await store.put('c/cas', text('2'), { ifMatch: v1 })).version;
        expect(v2).not.toBe(v1);
        expect(await rejectionCode(store.put('c/cas', text('stale'), { ifMatch: v1 }))).toBe('PRECONDITION_FAILED');
        const got = await store.get('c/cas');
        expect(fromText(got!.data)).toBe('2');
        expect(got!.version).toBe(v2);
      });

      it('ifMatch on an absent key fails with PRECONDITION_FAILED and creates nothing', async () => {
        const v = (await store.put('c/other', text('x'))).version;
        expect(await rejectionCode(store.put('c/absent', text('y'), { ifMatch: v }))).toBe('PRECONDITION_FAILED');
        expect(await store.get('c/absent')).toBeUndefined();
      });

      it('ifMatch with a deleted version fails', async () => {
        const v = (await store.put('c/gone', text('x'))).version;
        await store.delete('c/gone');
        expect(await rejectionCode(store.put('c/gone', text('y'), { ifMatch: v }))).toBe('PRECONDITION_FAILED');
      });

      it('16 concurrent create-only puts on one key: exactly one wins', async () => {
        const results = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => store.put('race/create', text(`writer-${i}`), { ifNoneMatch: '*' })));
        const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
        expect(winners).toHaveLength(1);
        for (const r of results) {
          if (r.status === 'rejected') expect(isTaqubaError(r.reason, 'PRECONDITION_FAILED')).toBe(true);
        }
        expect(fromText((await store.get('race/create'))!.data)).toBe(`writer-${winners[0]}`);
      });

      it('8 concurrent compare-and-swap increment loops lose no increment', async () => {
        await store.put('race/counter', text('0'));
        const perLoop = 10;
        const loop = async (): Promise<void> => {
          for (let done = 0; done < perLoop; ) {
            const cur = (await store.get('race/counter'))!;
            try {
              await store.put('race/counter', text(String(Number(fromText(cur.data)) + 1)), { ifMatch: cur.version });
              done++;
            } catch (e) {
              if (!isTaqubaError(e, 'PRECONDITION_FAILED')) throw e;
            }
          }
        };
        await Promise.all(Array.from({ length: 8 }, loop));
        expect(fromText((await store.get('race/counter'))!.data)).toBe(String(8 * perLoop));
      });
    });

    describe('ranged get', () => {
      const data = patternBytes(1000, 7);
      beforeEach(async () => {
        await store.put('r/obj', data);
      });

      it('reads a middle range with the object version', async () => {
        const full = await store.get('r/obj');
        const got = await store.get('r/obj', { range: { offset: 100, length: 50 } });
        expect(got?.data).toEqual(data.slice(100, 150));
        expect(got?.version).toBe(full?.version);
      });

      it('clamps a range that runs past the end', async () => {
        expect((await store.get('r/obj', { range: { offset: 990, length: 100 } }))?.data).toEqual(data.slice(990));
      });

      it('returns empty data for an offset at or beyond the end', async () => {
        expect((await store.get('r/obj', { range: { offset: 1000, length: 10 } }))?.data.length).toBe(0);
        expect((await store.get('r/obj', { range: { offset: 5000, length: 10 } }))?.data.length).toBe(0);
      });

      it('returns undefined for a range of an absent key', async () => {
        expect(await store.get('r/none', { range: { offset: 0, length: 10 } })).toBeUndefined();
      });

      it('rejects a negative offset or length with INVALID_ARGUMENT', async () => {
        expect(await rejectionCode(store.get('r/obj', { range: { offset: -1, length: 10 } }))).toBe('INVALID_ARGUMENT');
        expect(await rejectionCode(store.get('r/obj', { range: { offset: 0, length: -1 } }))).toBe('INVALID_ARGUMENT');
      });
    });

    describe('delete', () => {
      it('removes the object', async () => {
        await store.put('d/x', text('x'));
        await store.delete('d/x');
        expect(await store.get('d/x')).toBeUndefined();
        expect(await collect(store.list('d/'))).toEqual([]);
      });

      it('deleting an absent key succeeds', async () => {
        await expect(store.delete('d/never')).resolves.toBeUndefined();
      });

      it('a deleted key can be created again with ifNoneMatch', async () => {
        await store.put('d/again', text('1'));
        await store.delete('d/again');
        await store.put('d/again', text('2'), { ifNoneMatch: '*' });
        expect(fromText((await store.get('d/again'))!.data)).toBe('2');
      });

      it('deleting a key leaves keys below it', async () => {
        await store.put('d/p', text('1'));
        await store.put('d/p/q', text('2'));
        await store.delete('d/p');
        expect(await collect(store.list(''))).toEqual(['d/p/q']);
      });

      // Through the store's batch API when it has one (S3), else single deletes.
      it('deleteObjects removes every named key, absent ones included, and nothing else', async () => {
        const keys = Array.from({ length: 30 }, (_, i) => `b/${String(i).padStart(2, '0')}`);
        for (const key of keys) await store.put(key, text(key));
        await store.put('b/keep', text('keep'));
        await deleteObjects(store, [...keys.filter((_, i) => i % 3 !== 0), 'b/absent']);
        expect(await collect(store.list('b/'))).toEqual([...keys.filter((_, i) => i % 3 === 0), 'b/keep']);
        await deleteObjects(store, []);
        expect(await collect(store.list('b/'))).toHaveLength(11);
      });

      it('deleteObjects rejects a bad key with INVALID_ARGUMENT before deleting anything', async () => {
        await store.put('b/first', text('1'));
        await expect(deleteObjects(store, ['b/first', ''])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        if (store.deleteMany) await expect(store.deleteMany(['b/first', '../x'])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        expect(await collect(store.list('b/'))).toEqual(['b/first']);
      });
    });

    describe('list', () => {
      // '-' (0x2d) < '/' (0x2f) < '0' (0x30) < 'b' (0x62): a naive directory walk gets these wrong.
      const tricky = ['a/b', 'a-c', 'a/b/c', 'a0', 'ab', 'a', 'a/b-', 'a/b0', 'b', 'a/a/z'];

      beforeEach(async () => {
        for (const key of tricky) await store.put(key, text(key));
      });

      it('empty prefix lists every key in ascending string order', async () => {
        expect(await collect(store.list(''))).toEqual([...tricky].sort());
      });

      it('reports size and version of each object', async () => {
        await store.put('sized/x', patternBytes(123));
        const version = (await store.get('sized/x'))!.version;
        const infos = [];
        for await (const info of store.list('sized/')) infos.push(info);
        expect(infos).toEqual([{ key: 'sized/x', size: 123, version }]);
      });

      it('a directory-like prefix lists exactly the keys below it', async () => {
        expect(await collect(store.list('a/'))).toEqual(['a/a/z', 'a/b', 'a/b-', 'a/b/c', 'a/b0']);
      });

      it('a prefix that is not a directory matches every key starting with it', async () => {
        expect(await collect(store.list('a'))).toEqual(tricky.filter((k) => k.startsWith('a')).sort());
        expect(await collect(store.list('a/b'))).toEqual(['a/b', 'a/b-', 'a/b/c', 'a/b0']);
      });

      it('matches keys that extend the last prefix segment', async () => {
        await store.put('db/wal/0001', text('1'));
        await store.put('db/wal/00012', text('2'));
        await store.put('db/wal/0002', text('3'));
        expect(await collect(store.list('db/wal/0001'))).toEqual(['db/wal/0001', 'db/wal/00012']);
      });

      it('a prefix with no match lists nothing', async () => {
        expect(await collect(store.list('zzz'))).toEqual([]);
        expect(await collect(store.list('a/b/c/'))).toEqual([]);
      });

      it('startAfter skips keys up to and including it', async () => {
        const all = [...tricky].sort();
        for (const after of ['a/b', 'a-c', 'a', 'a/', 'a/b/', '', 'zz', 'a/b/c0']) {
          expect(await collect(store.list('', { startAfter: after }))).toEqual(all.filter((k) => k > after));
        }
      });

      it('startAfter combines with a prefix', async () => {
        expect(await collect(store.list('a/', { startAfter: 'a/b-' }))).toEqual(['a/b/c', 'a/b0']);
        expect(await collect(store.list('a/', { startAfter: 'a' }))).toEqual(['a/a/z', 'a/b', 'a/b-', 'a/b/c', 'a/b0']);
        expect(await collect(store.list('a/', { startAfter: 'b' }))).toEqual([]);
      });

      it('orders many keys across several levels', async () => {
        const keys: string[] = [];
        for (let i = 0; i < 60; i++) keys.push(`m/${(i * 37) % 11}/${i % 3 === 0 ? 'x' : 'x-'}${i}`, `m/${i % 7}-${i}`);
        for (const key of keys) await store.put(key, text(''));
        expect(await collect(store.list('m/'))).toEqual([...new Set(keys)].sort());
      });

      // These keys sort the same in UTF-16 code unit order (the contract) and in UTF-8 byte order
      // (S3's native order); the two differ only between U+E000..U+FFFF and astral characters.
      it('non-ASCII keys list in UTF-16 code unit order', async () => {
        const keys = ['u/é', 'u/e', 'u/z', 'u/日本', 'u/Z', 'u/😀', 'u/a b'];
        for (const key of keys) await store.put(key, text(key));
        expect(await collect(store.list('u/'))).toEqual([...keys].sort());
        expect(fromText((await store.get('u/日本'))!.data)).toBe('u/日本');
      });
    });

    // The listing contract under concurrent writes (ObjectStore.list, issue 24): a listing is no
    // snapshot, but it never loses a key present throughout, nor the newest member of a chain.
    describe('list during writes', () => {
      const chainKey = (n: number): string => `chain/${String(n).padStart(6, '0')}`;

      it('a chain of "create the successor, then delete the predecessor" never hides its newest key', async () => {
        await store.put(chainKey(0), text('0'));
        let newest = 0; // the greatest n whose put resolved: chain/<newest> exists until its successor does
        let writing = true;
        const writer = (async () => {
          try {
            for (let n = 0; n < 10; n++) {
              await store.put(chainKey(n + 1), text(String(n + 1)));
              newest = n + 1;
              await store.delete(chainKey(n));
            }
          } finally {
            writing = false;
          }
        })();
        const problems: string[] = [];
        let listings = 0;
        while (writing || listings < 3) {
          const floor = chainKey(newest);
          const keys = await collect(store.list('chain/'));
          listings++;
          const last = keys[keys.length - 1];
          if (last === undefined || last < floor) problems.push(`listing ${listings} returned ${JSON.stringify(keys)}; ${floor} existed when it started`);
          if (keys.some((k, i) => i > 0 && k <= keys[i - 1]!)) problems.push(`listing ${listings} is not strictly ascending: ${JSON.stringify(keys)}`);
        }
        await writer;
        expect(problems).toEqual([]);
        expect(await collect(store.list('chain/'))).toEqual([chainKey(10)]);
      });

      it('keys present for the whole listing are all returned while keys around them come and go', async () => {
        // Stable keys end in 0, churned keys in 5, so they interleave in key order.
        const stable = Array.from({ length: 12 }, (_, i) => `mix/${String(i).padStart(2, '0')}0`);
        const churned = (i: number): string => `mix/${String(i % 13).padStart(2, '0')}5`;
        for (const key of stable) await store.put(key, text('s'));
        for (let i = 0; i < 13; i += 2) await store.put(churned(i), text('c'));
        let writing = true;
        const writer = (async () => {
          try {
            for (let i = 0; i < 10; i++) {
              await store.put(churned(i + 1), text('c'));
              await store.delete(churned(i));
            }
          } finally {
            writing = false;
          }
        })();
        const problems: string[] = [];
        let listings = 0;
        while (writing || listings < 3) {
          const keys = await collect(store.list('mix/'));
          listings++;
          const missing = stable.filter((k) => !keys.includes(k));
          if (missing.length > 0) problems.push(`listing ${listings} missed ${JSON.stringify(missing)}: ${JSON.stringify(keys)}`);
          if (keys.some((k, i) => i > 0 && k <= keys[i - 1]!)) problems.push(`listing ${listings} is not strictly ascending: ${JSON.stringify(keys)}`);
        }
        await writer;
        expect(problems).toEqual([]);
      });
    });

    describe('bad keys', () => {
      const badKeys = ['', '/abs', 'a/../b', 'a//b', 'nul\0byte', 'trailing/', './a', 'back\\slash'];

      for (const key of badKeys) {
        it(`rejects ${JSON.stringify(key)} with INVALID_ARGUMENT naming the key`, async () => {
          for (const call of [() => store.get(key), () => store.put(key, text('x')), () => store.delete(key)]) {
            try {
              await call();
              expect.unreachable('call should reject');
            } catch (e) {
              expect(isTaqubaError(e, 'INVALID_ARGUMENT')).toBe(true);
              expect((e as Error).message).toContain(JSON.stringify(key));
            }
          }
        });
      }

      it('rejects a bad list prefix with INVALID_ARGUMENT', async () => {
        expect(await rejectionCode(collect(store.list('/abs')))).toBe('INVALID_ARGUMENT');
        expect(await rejectionCode(collect(store.list('a//')))).toBe('INVALID_ARGUMENT');
      });

      // Issue #12: the filesystem store stored an ArrayBuffer, a DataView or a number as 0 bytes,
      // a string as UTF-8, and failed on null as STORE_UNAVAILABLE.
      it('rejects put data that is not a Uint8Array with INVALID_ARGUMENT naming the key, storing nothing', async () => {
        const notBytes: [string, unknown][] = [
          ['ArrayBuffer', new ArrayBuffer(4)],
          ['DataView', new DataView(new ArrayBuffer(4))],
          ['number', 42],
          ['string', 'text'],
          ['null', null],
          ['undefined', undefined],
          ['Array', [1, 2, 3]],
        ];
        for (const [got, data] of notBytes) {
          try {
            await store.put('bad/data', data as Uint8Array);
            expect.unreachable(`put of ${got} should reject`);
          } catch (e) {
            expect(isTaqubaError(e, 'INVALID_ARGUMENT'), `put of ${got}: ${String(e)}`).toBe(true);
            expect((e as Error).message).toContain('key=bad/data');
            expect((e as Error).message).toContain(`got=${got}`);
          }
          expect(await store.get('bad/data'), `after a put of ${got}`).toBeUndefined();
        }
        expect(await collect(store.list(''))).toEqual([]);
      });

      it('a rejected put stores nothing', async () => {
        await store.put('a', text('kept'));
        await rejectionCode(store.put('a/../a', text('evil')));
        expect(await collect(store.list(''))).toEqual(['a']);
        expect(fromText((await store.get('a'))!.data)).toBe('kept');
      });
    });
  });
}
