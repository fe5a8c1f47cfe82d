/**
 * The engine's behaviour over any ObjectStore. Registered by the node tests (memory, filesystem)
 * and, later, by the browser and S3 tests, so every store runs the same contract.
 */
import { describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { FaultyObjectStore } from '../../../src/testing/faulty-store.js';
import { isTaqubaError } from '../../../src/core/errors.js';
import { KvDb, MAX_KEY_BYTES, MAX_VALUE_BYTES, type MergeOperator, type WriteOp } from '../../../src/core/kv/index.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import { randomInt, seededRandom } from '../../support/random.js';
import { waitFor } from '../../support/wait.js';

export type StoreFactory = () => Promise<{ store: ObjectStore; cleanup?: () => Promise<void> }>;

/** Merge operator used by the suite: signed counters under 'c', byte concatenation elsewhere. */
export const testMerge: MergeOperator = (key, existing, operand) => {
  if (key[0] === 0x63 /* c */) {
    const sum = (existing ? Number(fromUtf8(existing)) : 0) + Number(fromUtf8(operand));
    return utf8(String(sum));
  }
  if (!existing) return operand;
  const out = new Uint8Array(existing.length + operand.length);
  out.set(existing);
  out.set(operand, existing.length);
  return out;
};

const k = (s: string): Uint8Array => utf8(s);
const text = (v: Uint8Array | undefined): string | undefined => (v === undefined ? undefined : fromUtf8(v));

async function collect(iter: AsyncIterable<{ key: Uint8Array; value: Uint8Array }>): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for await (const e of iter) out.push([fromUtf8(e.key), fromUtf8(e.value)]);
  return out;
}

async function rejectsWithCode(p: Promise<unknown>, code: string): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    expect(isTaqubaError(e) ? e.code : e).toBe(code);
    return e;
  }
  throw new Error(`expected a rejection with ${code}`);
}

export function describeKvEngineSuite(name: string, makeStore: StoreFactory, options: { modelSteps?: number } = {}): void {
  const small = { memtableBytes: 2048, blockBytes: 256, maxRuns: 3, mergeOperator: testMerge, targetSstBytes: 8192 };

  async function withStore(fn: (store: ObjectStore) => Promise<void>): Promise<void> {
    const { store, cleanup } = await makeStore();
    try {
      await fn(store);
    } finally {
      await cleanup?.();
    }
  }

  describe(`kv engine over ${name}`, () => {
    it('matches a simple model under random operations, flushes, compactions and reopens', async () => {
      const seed = 0x5eed + (options.modelSteps ?? 0);
      const rand = seededRandom(seed);
      await withStore(async (store) => {
        const model = new Map<string, string>();
        let db = await KvDb.open(store, small);
        const steps = options.modelSteps ?? 1500;
        const keyOf = (): string => (rand() < 0.2 ? 'c' : 'k') + String(randomInt(rand, 120)).padStart(3, '0');
        for (let step = 0; step < steps; step++) {
          const r = rand();
          if (r < 0.45) {
            // a transaction of 1-4 writes, durable or not
            const ops: [string, string, string][] = [];
            for (let n = 1 + randomInt(rand, 4); n > 0; n--) {
              const key = keyOf();
              const kind = key.startsWith('c') ? 'merge' : rand() < 0.2 ? 'delete' : 'put';
              ops.push([kind, key, kind === 'merge' ? String(randomInt(rand, 10) - 3) : `v${step}-${'x'.repeat(randomInt(rand, 40))}`]);
            }
            await db.transaction(
              (t) => {
                for (const [kind, key, value] of ops) {
                  if (kind === 'put') t.put(k(key), k(value));
                  else if (kind === 'delete') t.delete(k(key));
                  else t.merge(k(key), k(value));
                }
              },
              { durable: rand() < 0.5 },
            );
            for (const [kind, key, value] of ops) {
              if (kind === 'put') model.set(key, value);
              else if (kind === 'delete') model.delete(key);
              else model.set(key, String(Number(model.get(key) ?? '0') + Number(value)));
            }
          } else if (r < 0.75) {
            const key = keyOf();
            expect(text(await db.get(k(key))), `get ${key} at step ${step} seed ${seed}`).toBe(model.get(key));
          } else if (r < 0.9) {
            const prefix = rand() < 0.5 ? 'k0' : rand() < 0.5 ? 'c' : '';
            const start = rand() < 0.5 ? `${prefix}${randomInt(rand, 9)}` : undefined;
            const exclusive = rand() < 0.5;
            const limit = rand() < 0.3 ? randomInt(rand, 10) : undefined;
            let expected = [...model.entries()]
              .filter(([key]) => key.startsWith(prefix) && (start === undefined || (exclusive ? key > start : key >= start)))
              .sort(([a], [b]) => (a < b ? -1 : 1));
            if (limit !== undefined) expected = expected.slice(0, limit);
            const got = await collect(db.scan({ prefix: k(prefix), start: start === undefined ? undefined : k(start), startExclusive: exclusive, limit }));
            expect(got, `scan at step ${step} seed ${seed}`).toEqual(expected);
          } else if (r < 0.97) {
            await db.flush();
          } else {
            await db.close();
            db = await KvDb.open(store, small);
          }
        }
        await db.close();
        db = await KvDb.open(store, small);
        expect(Object.fromEntries(await collect(db.scan()))).toEqual(Object.fromEntries([...model.entries()].sort()));
        await db.close();
      });
    });

    it('concurrent transfers keep the total under memtable flushes and compaction (snapshot isolation)', async () => {
      await withStore(async (store) => {
        const db = await KvDb.open(store, { ...small, memtableBytes: 1024 });
        const accounts = 12;
        await db.write(Array.from({ length: accounts }, (_, i) => ({ type: 'put' as const, key: k(`acct${i}`), value: k('100') })));
        const rand = seededRandom(42);
        const transfer = async (): Promise<void> => {
          const from = randomInt(rand, accounts);
          const to = (from + 1 + randomInt(rand, accounts - 1)) % accounts;
          await db.transaction(
            async (t) => {
              const a = Number(text(await t.get(k(`acct${from}`))));
              const b = Number(text(await t.get(k(`acct${to}`))));
              t.put(k(`acct${from}`), k(String(a - 1)));
              t.put(k(`acct${to}`), k(String(b + 1)));
              // Pad the commit so memtables fill and flush while other transfers are open.
              t.put(k(`log${randomInt(rand, 50)}`), new Uint8Array(80));
            },
            { maxAttempts: 1000 },
          );
        };
        const worker = async (): Promise<void> => {
          for (let i = 0; i < 40; i++) await transfer();
        };
        await Promise.all(Array.from({ length: 6 }, worker));
        let total = 0;
        for await (const e of db.scan({ prefix: k('acct') })) total += Number(fromUtf8(e.value));
        expect(total).toBe(accounts * 100);
        await db.close();
      });
    });

    it('transactions read their own writes in get and scan, and merge onto stored values', async () => {
      await withStore(async (store) => {
        const db = await KvDb.open(store, { mergeOperator: testMerge });
        await db.write([
          { type: 'put', key: k('a'), value: k('1') },
          { type: 'put', key: k('b'), value: k('2') },
          { type: 'put', key: k('c1'), value: k('5') },
        ]);
        const t = db.begin();
        t.put(k('a'), k('one'));
        t.delete(k('b'));
        t.put(k('ab'), k('new'));
        t.merge(k('c1'), k('3'));
        expect(text(await t.get(k('a')))).toBe('one');
        expect(await t.get(k('b'))).toBeUndefined();
        expect(text(await t.get(k('c1')))).toBe('8');
        expect(await collect(t.scan())).toEqual([
          ['a', 'one'],
          ['ab', 'new'],
          ['c1', '8'],
        ]);
        // Outside the transaction nothing changed yet.
        expect(text(await db.get(k('a')))).toBe('1');
        await t.commit();
        expect(await collect(db.scan())).toEqual([
          ['a', 'one'],
          ['ab', 'new'],
          ['c1', '8'],
        ]);
        await db.close();
      });
    });

    it('snapshot reads ignore later commits, and a write-write race fails with CONFLICT', async () => {
      await withStore(async (store) => {
        const db = await KvDb.open(store, { mergeOperator: testMerge });
        await db.write([{ type: 'put', key: k('x'), value: k('0') }]);
        const t1 = db.begin();
        const t2 = db.begin();
        expect(text(await t1.get(k('x')))).toBe('0');
        t2.put(k('x'), k('t2'));
        await t2.commit();
        // t1's snapshot still sees the old value...
        expect(text(await t1.get(k('x')))).toBe('0');
        expect(await collect(t1.scan())).toEqual([['x', '0']]);
        // ...and writing the same key loses the race.
        t1.put(k('x'), k('t1'));
        await rejectsWithCode(t1.commit(), 'CONFLICT');
        expect(text(await db.get(k('x')))).toBe('t2');
        await db.close();
      });
    });

    it('untracked writes and merges never conflict; disjoint writes do not conflict', async () => {
      await withStore(async (store) => {
        const db = await KvDb.open(store, { mergeOperator: testMerge });
        const t1 = db.begin();
        const t2 = db.begin();
        t1.merge(k('c'), k('1'));
        t2.merge(k('c'), k('2'));
        t1.put(k('u'), k('1'), { untracked: true });
        t2.put(k('u'), k('2'), { untracked: true });
        t1.put(k('p'), k('1'));
        t2.put(k('q'), k('2'));
        await t1.commit();
        await t2.commit();
        expect(text(await db.get(k('c')))).toBe('3');
        expect(text(await db.get(k('u')))).toBe('2');
        await db.close();
      });
    });

    it('transaction() retries a conflicting body until it wins, losing no increment', async () => {
      await withStore(async (store) => {
        const db = await KvDb.open(store);
        await db.write([{ type: 'put', key: k('n'), value: k('0') }]);
        const inc = (): Promise<void> =>
          db.transaction(async (t) => {
            const n = Number(text(await t.get(k('n'))));
            await Promise.resolve();
            t.put(k('n'), k(String(n + 1)));
          });
        const loop = async (): Promise<void> => {
          for (let i = 0; i < 5; i++) await inc();
        };
        await Promise.all(Array.from({ length: 8 }, loop));
        expect(text(await db.get(k('n')))).toBe('40');
        await db.close();
      });
    });

    it('a transaction whose snapshot value moved into a table fails with CONFLICT, never a wrong read', async () => {
      await withStore(async (store) => {
        const db = await KvDb.open(store, { memtableBytes: 1024 });
        await db.write([{ type: 'put', key: k('x'), value: k('old') }]);
        const t = db.begin();
        await db.write([{ type: 'put', key: k('x'), value: k('new') }]);
        // Fill the memtable so both versions leave memory.
        for (let i = 0; i < 40; i++) await db.write([{ type: 'put', key: k(`fill${i}`), value: new Uint8Array(64) }]);
        await db.flush();
        await waitFor(async () => (await countObjects(store, 'kv/sst/')) > 0, 'a table object under kv/sst/', { timeoutMs: 5000 });
        const e = await rejectsWithCode(t.get(k('x')), 'CONFLICT');
        expect((e as { details: { reason: string } }).details.reason).toBe('snapshot_too_old');
        t.rollback();
        expect(text(await db.get(k('x')))).toBe('new');
        await db.close();
      });
    });

    it('a second writer fences the first: its next commit rejects with FENCED and history does not fork', async () => {
      await withStore(async (store) => {
        const a = await KvDb.open(store);
        await a.write([{ type: 'put', key: k('from-a'), value: k('1') }]);
        const b = await KvDb.open(store);
        expect(b.epoch).toBe(a.epoch + 1);
        expect(text(await b.get(k('from-a')))).toBe('1');
        await rejectsWithCode(a.write([{ type: 'put', key: k('late-a'), value: k('x') }]), 'FENCED');
        await rejectsWithCode(a.get(k('from-a')), 'FENCED');
        await b.write([{ type: 'put', key: k('from-b'), value: k('2') }]);
        await b.close();
        await a.close();
        const c = await KvDb.open(store);
        expect(await collect(c.scan())).toEqual([
          ['from-a', '1'],
          ['from-b', '2'],
        ]);
        await c.close();
      });
    });

    it('a non-durable commit from a fenced writer is never acknowledged as durable and never appears', async () => {
      await withStore(async (store) => {
        const a = await KvDb.open(store);
        const b = await KvDb.open(store);
        await a.write([{ type: 'put', key: k('ghost'), value: k('1') }], { durable: false });
        await rejectsWithCode(a.flush(), 'FENCED');
        expect(await b.get(k('ghost'))).toBeUndefined();
        await b.close();
        const c = await KvDb.open(store);
        expect(await c.get(k('ghost'))).toBeUndefined();
        await c.close();
      });
    });

    it('a failed WAL put fails the engine; reopening recovers every acknowledged commit', async () => {
      await withStore(async (base) => {
        const store = new FaultyObjectStore(base);
        const db = await KvDb.open(store);
        await db.write([{ type: 'put', key: k('acked'), value: k('1') }]);
        store.addRule({ type: 'fail', ops: ['put'], keyPrefix: 'kv/wal/' });
        const failed = await rejectsWithCode(db.write([{ type: 'put', key: k('lost'), value: k('1') }]), 'STORE_UNAVAILABLE');
        expect((failed as { details: { injected?: boolean } }).details.injected).toBe(true);
        // Poisoned: even reads and a flush now fail, until reopened.
        const closed = await rejectsWithCode(db.get(k('acked')), 'CLOSED');
        expect((closed as { details: { reason: string } }).details.reason).toBe('failed');
        await rejectsWithCode(db.write([{ type: 'put', key: k('later'), value: k('1') }]), 'CLOSED');
        await db.close();
        store.clearRules();
        const reopened = await KvDb.open(store);
        expect(text(await reopened.get(k('acked')))).toBe('1');
        expect(await reopened.get(k('lost'))).toBeUndefined();
        await reopened.close();
      });
    });

    it('under random store failures every acknowledged commit survives and none is half-applied', async () => {
      await withStore(async (base) => {
        const store = new FaultyObjectStore(base, { seed: 7 });
        const opts = { memtableBytes: 1024, blockBytes: 256, maxRuns: 2 };
        const acked = new Map<number, string>();
        const attempted = new Set<number>();
        let round = 0;
        for (let reopen = 0; reopen < 12; reopen++) {
          store.clearRules();
          const db = await KvDb.open(store, opts).catch(() => undefined);
          if (!db) continue;
          store.addRule({ type: 'fail-rate', rate: 0.05, ops: ['put', 'get'], when: reopen % 2 === 0 ? 'before' : 'after' });
          for (let i = 0; i < 40; i++, round++) {
            attempted.add(round);
            // Each commit writes two keys that must appear together or not at all.
            const ok = await db
              .write([
                { type: 'put', key: k(`a${round}`), value: k(`r${round}`) },
                { type: 'put', key: k(`b${round}`), value: k(`r${round}`) },
              ])
              .then(() => true)
              .catch(() => false);
            if (ok) acked.set(round, `r${round}`);
            else break;
          }
          await db.close().catch(() => undefined);
        }
        store.clearRules();
        const check = await KvDb.open(store, opts);
        for (const r of attempted) {
          const a = text(await check.get(k(`a${r}`)));
          const b = text(await check.get(k(`b${r}`)));
          expect(a, `pair ${r} applied together`).toBe(b);
          if (acked.has(r)) expect(a, `acknowledged commit ${r} survives`).toBe(acked.get(r));
        }
        expect(acked.size).toBeGreaterThan(20);
        await check.close();
      });
    });

    it.each(['flush:sst-put', 'flush:manifest-put', 'compact:manifest-put'])('a failure at %s fails the engine and loses nothing acknowledged', async (point) => {
      await withStore(async (store) => {
        let armed = true;
        const opts = {
          memtableBytes: 1024,
          blockBytes: 256,
          maxRuns: 2,
          faults: (at: string) => {
            if (armed && at === point) {
              armed = false;
              throw new Error(`injected at ${at}`);
            }
          },
        };
        const db = await KvDb.open(store, opts);
        const acked: number[] = [];
        for (let i = 0; i < 400; i++) {
          const ok = await db
            .write([{ type: 'put', key: k(`f${String(i).padStart(4, '0')}`), value: k('w'.repeat(30)) }])
            .then(() => true)
            .catch(() => false);
          if (!ok) break;
          acked.push(i);
        }
        expect(armed).toBe(false);
        await db.close().catch(() => undefined);
        const reopened = await KvDb.open(store, { ...opts, faults: undefined });
        for (const i of acked) expect(text(await reopened.get(k(`f${String(i).padStart(4, '0')}`)))).toBe('w'.repeat(30));
        await reopened.close();
      });
    });

    it('an older writer that stores a commit while the new one opens is replayed, then fenced', async () => {
      await withStore(async (store) => {
        const a = await KvDb.open(store);
        await a.write([{ type: 'put', key: k('x'), value: k('1') }]);
        let raced = false;
        // The last step before the older writer is shut out: fencing its WAL ids, or sealing its log.
        const race = store.appendLogs ? 'open:seal-log' : 'open:fence-wal';
        const b = await KvDb.open(store, {
          faults: async (at) => {
            if (at === race && !raced) {
              raced = true;
              // A is not fenced yet: its commit lands on the id B is about to claim.
              await a.write([{ type: 'put', key: k('y'), value: k('2') }]);
            }
          },
        });
        expect(raced).toBe(true);
        expect(text(await b.get(k('y')))).toBe('2');
        await rejectsWithCode(a.write([{ type: 'put', key: k('z'), value: k('3') }]), 'FENCED');
        await b.close();
        await a.close();
      });
    });

    it('a reader sees whole commits, follows the writer on refresh and never writes', async () => {
      await withStore(async (store) => {
        const db = await KvDb.open(store, { memtableBytes: 2048, mergeOperator: testMerge });
        await db.write([{ type: 'put', key: k('a'), value: k('1') }]);
        const reader = await KvDb.openReader(store, { mergeOperator: testMerge });
        expect(text(await reader.get(k('a')))).toBe('1');
        const before = await listAll(store);
        for (let i = 0; i < 100; i++) await db.write([{ type: 'put', key: k(`r${String(i).padStart(3, '0')}`), value: k('x'.repeat(50)) }]);
        await db.write([
          { type: 'put', key: k('pair1'), value: k('p') },
          { type: 'put', key: k('pair2'), value: k('p') },
        ]);
        expect(await reader.get(k('pair1'))).toBeUndefined();
        await reader.refresh();
        expect(text(await reader.get(k('pair1')))).toBe('p');
        expect(text(await reader.get(k('pair2')))).toBe('p');
        expect((await collect(reader.scan({ prefix: k('r') }))).length).toBe(100);
        // The reader never bumped the epoch: the writer still writes.
        await db.write([{ type: 'put', key: k('after'), value: k('1') }]);
        expect(before.length).toBeGreaterThan(0);
        await reader.close();
        await db.close();
      });
    });

    it('a flipped byte in a WAL object or a closed log fails the open with CORRUPT_DATA naming the object', async () => {
      await withStore(async (store) => {
        const db = await KvDb.open(store);
        await db.write([{ type: 'put', key: k('a'), value: k('precious') }]);
        await db.close();
        const wal = (await listAll(store)).filter((key) => key.startsWith('kv/wal/') || key.startsWith('kv/log/'));
        let corrupted: string | undefined;
        for (const key of wal) {
          const obj = (await store.get(key))!;
          if (obj.data.length > 24) {
            const bytes = obj.data.slice();
            bytes[bytes.length - 10] ^= 0xff;
            await store.put(key, bytes);
            corrupted = key;
          }
        }
        expect(corrupted).toBeDefined();
        const e = await rejectsWithCode(KvDb.open(store), 'CORRUPT_DATA');
        expect((e as Error).message).toContain(corrupted);
      });
    });

    it('a flipped byte in a table block makes the read fail with CORRUPT_DATA naming the table', async () => {
      await withStore(async (store) => {
        const db = await KvDb.open(store, { memtableBytes: 1024, blockBytes: 256 });
        for (let i = 0; i < 60; i++) await db.write([{ type: 'put', key: k(`t${String(i).padStart(3, '0')}`), value: k('y'.repeat(40)) }]);
        await db.close();
        const tables = (await listAll(store)).filter((key) => key.startsWith('kv/sst/'));
        expect(tables.length).toBeGreaterThan(0);
        for (const key of tables) {
          const obj = (await store.get(key))!;
          const bytes = obj.data.slice();
          bytes[5] ^= 0x55; // inside the first data block
          await store.put(key, bytes);
        }
        const reopened = await KvDb.open(store, { memtableBytes: 1024, blockBytes: 256 });
        const e = await rejectsWithCode(collect(reopened.scan()), 'CORRUPT_DATA');
        expect((e as Error).message).toMatch(/kv\/sst\//);
        await reopened.close();
      });
    });

    it('a corrupt manifest fails the open with CORRUPT_DATA', async () => {
      await withStore(async (store) => {
        const db = await KvDb.open(store);
        await db.close();
        const keys: string[] = [];
        for await (const info of store.list('kv/manifest/')) keys.push(info.key);
        const newest = keys[keys.length - 1];
        const bytes = (await store.get(newest))!.data.slice();
        bytes[6] ^= 1;
        await store.put(newest, bytes);
        const e = await rejectsWithCode(KvDb.open(store), 'CORRUPT_DATA');
        expect((e as Error).message).toContain(newest);
      });
    });

    it('rejects bad keys, values and options with typed errors naming the value', async () => {
      await withStore(async (store) => {
        await rejectsWithCode(KvDb.open(store, { path: '../escape' }), 'INVALID_CONFIG');
        await rejectsWithCode(KvDb.open(store, { memtableBytes: -1 }), 'INVALID_CONFIG');
        const db = await KvDb.open(store);
        const t = db.begin();
        expect(() => t.put(new Uint8Array(0), k('v'))).toThrow(/key must be a non-empty Uint8Array/);
        expect(() => t.put('str' as unknown as Uint8Array, k('v'))).toThrow(/key=string/);
        expect(() => t.put(k('a'), 42 as unknown as Uint8Array)).toThrow(/value=number/);
        expect(() => t.merge(k('a'), k('1'))).toThrow(/mergeOperator/);
        expect(() => t.put(new Uint8Array(MAX_KEY_BYTES + 1), k('v'))).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining(`longer than ${MAX_KEY_BYTES} bytes`) }));
        expect(() => t.put(k('a'), new Uint8Array(MAX_VALUE_BYTES + 1))).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining(`larger than ${MAX_VALUE_BYTES} bytes`) }));
        t.put(new Uint8Array(MAX_KEY_BYTES).fill(1), k('v'));
        t.rollback();
        const badOp = { type: 'upsert', key: k('a'), value: k('v') } as unknown as WriteOp;
        const e = await rejectsWithCode(db.write([badOp]), 'INVALID_ARGUMENT');
        expect((e as Error).message).toContain('type=upsert');
        expect(await db.get(k('a'))).toBeUndefined();
        expect(() => db.scan({ limit: -1 })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('limit=-1') }));
        await db.close();
        await rejectsWithCode(db.get(k('a')), 'CLOSED');
      });
    });

    it('blind writes never conflict, even when they wait out write backpressure together', async () => {
      await withStore(async (store) => {
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        const db = await KvDb.open(store, { memtableBytes: 1024, maxFrozenMemtables: 1, faults: (point) => (point === 'flush:sst-put' ? held : undefined) });
        // Fill two memtables: the first waits at its table put, so the second's freeze stalls commits.
        const fills: Promise<void>[] = [];
        for (let i = 0; i < 60; i++) fills.push(db.write([{ type: 'put', key: k(`fill${i}`), value: new Uint8Array(64) }], { durable: false }));
        const racing = [db.write([{ type: 'put', key: k('same'), value: k('1') }]), db.write([{ type: 'put', key: k('same'), value: k('2') }])];
        release();
        await Promise.all([...fills, ...racing]);
        expect(text(await db.get(k('same')))).toBe('2');
        await db.close();
      });
    });

    it('garbage-collects WAL objects and replaced tables', async () => {
      await withStore(async (store) => {
        const opts = { memtableBytes: 1024, blockBytes: 256, maxRuns: 2 };
        const db = await KvDb.open(store, opts);
        for (let i = 0; i < 300; i++) await db.write([{ type: 'put', key: k(`g${i % 30}`), value: k('z'.repeat(40)) }]);
        await db.close();
        const reopened = await KvDb.open(store, opts);
        await reopened.whenIdle();
        await reopened.close();
        const keys = await listAll(store);
        const wal = keys.filter((x) => x.startsWith('kv/wal/'));
        const tables = keys.filter((x) => x.startsWith('kv/sst/'));
        // 300 commits went through; only the tail since the last table flush remains, and
        // compaction keeps the number of tables near maxRuns.
        expect(wal.length).toBeLessThan(60);
        expect(tables.length).toBeLessThanOrEqual(4);
        const check = await KvDb.open(store, opts);
        expect((await collect(check.scan())).length).toBe(30);
        await check.close();
      });
    });
  });
}

async function listAll(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const info of store.list('')) keys.push(info.key);
  return keys;
}

async function countObjects(store: ObjectStore, prefix: string): Promise<number> {
  let n = 0;
  for await (const _ of store.list(prefix)) n++;
  return n;
}
