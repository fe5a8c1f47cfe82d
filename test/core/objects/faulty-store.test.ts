import { describe, expect, it } from 'vitest';
import { MockClock } from '../../../src/core/clock.js';
import { isTaqubaError, StorePermissionError, type TaqubaError } from '../../../src/core/errors.js';
import { MemoryObjectStore, type ObjectStore } from '../../../src/core/objects/index.js';
import { createSeededRandom, FaultyObjectStore } from '../../../src/testing/faulty-store.js';
import { describeObjectStoreConformance } from './object-store.conformance.js';

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const fromText = (b: Uint8Array): string => new TextDecoder().decode(b);

async function outcome(promise: Promise<unknown>): Promise<'ok' | TaqubaError> {
  try {
    await promise;
    return 'ok';
  } catch (e) {
    if (isTaqubaError(e)) return e;
    throw e;
  }
}

async function listKeys(store: ObjectStore, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for await (const info of store.list(prefix)) out.push(info.key);
  return out;
}

function setup(options?: ConstructorParameters<typeof FaultyObjectStore>[1]): { inner: MemoryObjectStore; faulty: FaultyObjectStore } {
  const inner = new MemoryObjectStore();
  return { inner, faulty: new FaultyObjectStore(inner, options) };
}

describeObjectStoreConformance('FaultyObjectStore without rules', async () => ({ store: new FaultyObjectStore(new MemoryObjectStore()) }));

describe('FaultyObjectStore', () => {
  it('has deleteMany exactly when the inner store has it; a delete rule fails a whole batch', async () => {
    expect(new FaultyObjectStore(new MemoryObjectStore()).deleteMany).toBeUndefined();
    const inner = new MemoryObjectStore() as MemoryObjectStore & { deleteMany(keys: readonly string[]): Promise<void> };
    inner.deleteMany = async (keys) => {
      for (const key of keys) await inner.delete(key);
    };
    const faulty = new FaultyObjectStore(inner);
    await faulty.put('x/1', text('1'));
    await faulty.put('x/2', text('2'));
    faulty.addRule({ type: 'fail', ops: ['delete'], keyPrefix: 'x/' });
    const failure = (await outcome(faulty.deleteMany!(['x/1', 'x/2']))) as TaqubaError;
    expect(failure.details).toMatchObject({ injected: true, op: 'delete', key: 'x/1' });
    expect(await listKeys(inner)).toEqual(['x/1', 'x/2']);
    expect(await outcome(faulty.deleteMany!(['x/1', 'x/2']))).toBe('ok');
    expect(await listKeys(inner)).toEqual([]);
  });

  it('fails the nth matching call of a kind under a key prefix, and only that one', async () => {
    const { inner, faulty } = setup();
    const rule = faulty.addRule({ type: 'fail', ops: ['put'], keyPrefix: 'db/wal/', nth: 3 });
    const results = [];
    for (const key of ['db/wal/1', 'db/other', 'db/wal/2', 'db/wal/3', 'db/wal/4']) results.push(await outcome(faulty.put(key, text(key))));
    expect(results.slice(0, 3)).toEqual(['ok', 'ok', 'ok']);
    const failure = results[3] as TaqubaError;
    expect(failure.code).toBe('STORE_UNAVAILABLE');
    expect(failure.details).toMatchObject({ injected: true, op: 'put', key: 'db/wal/3' });
    expect(results[4]).toBe('ok');
    expect(await inner.get('db/wal/3')).toBeUndefined();
    expect(await outcome(faulty.get('db/wal/3'))).toBe('ok'); // gets do not match the rule
    expect(rule.matched).toBe(4);
    expect(rule.fired).toBe(1);
    expect(faulty.injectedCount).toBe(1);
  });

  it('fails a window of count calls, or every call after nth with count Infinity', async () => {
    const { faulty } = setup();
    faulty.addRule({ type: 'fail', ops: ['delete'], nth: 2, count: 2 });
    const deletes = [];
    for (let i = 0; i < 5; i++) deletes.push((await outcome(faulty.delete(`k${i}`))) === 'ok');
    expect(deletes).toEqual([true, false, false, true, true]);

    faulty.clearRules();
    faulty.addRule({ type: 'fail', ops: ['get'], nth: 3, count: Infinity });
    const gets = [];
    for (let i = 0; i < 6; i++) gets.push((await outcome(faulty.get('k'))) === 'ok');
    expect(gets).toEqual([true, true, false, false, false, false]);
  });

  it("'after' failures reach the store and still report failure (a lost response)", async () => {
    const { inner, faulty } = setup();
    faulty.addRule({ type: 'fail', ops: ['put'], when: 'after' });
    expect(await outcome(faulty.put('k', text('landed')))).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(fromText((await inner.get('k'))!.data)).toBe('landed');
  });

  it('throws the error a rule supplies', async () => {
    const { faulty } = setup();
    faulty.addRule({ type: 'fail', error: (call) => new StorePermissionError(`quota exceeded. key=${call.key}`) });
    expect(await outcome(faulty.put('k', text('x')))).toMatchObject({ code: 'STORE_PERMISSION', message: 'quota exceeded. key=k' });
  });

  it('fail-rate fails about that fraction of calls, identically for the same seed', async () => {
    const pattern = async (seed: number): Promise<boolean[]> => {
      const { faulty } = setup({ seed });
      faulty.addRule({ type: 'fail-rate', rate: 0.3 });
      const out = [];
      for (let i = 0; i < 1000; i++) out.push((await outcome(faulty.get('k'))) !== 'ok');
      return out;
    };
    const a = await pattern(42);
    expect(await pattern(42)).toEqual(a);
    expect(await pattern(43)).not.toEqual(a);
    const failures = a.filter(Boolean).length;
    expect(failures).toBeGreaterThan(240);
    expect(failures).toBeLessThan(360);
  });

  it('fail-rate draws from an injected random source', async () => {
    const draws = [0.9, 0.1, 0.5];
    const { faulty } = setup({ random: () => draws.shift()! });
    faulty.addRule({ type: 'fail-rate', rate: 0.5 });
    const results = [];
    for (let i = 0; i < 3; i++) results.push((await outcome(faulty.get('k'))) === 'ok');
    expect(results).toEqual([true, false, true]);
  });

  it('createSeededRandom returns reproducible floats in [0, 1)', () => {
    const a = createSeededRandom(7);
    const b = createSeededRandom(7);
    for (let i = 0; i < 1000; i++) {
      const x = a();
      expect(x).toBe(b());
      expect(x >= 0 && x < 1).toBe(true);
    }
  });

  it('latency delays matching calls through the injected clock', async () => {
    const clock = new MockClock();
    const { faulty } = setup({ clock });
    faulty.addRule({ type: 'latency', ms: 100, ops: ['put'] });
    let done = false;
    const put = faulty.put('k', text('x')).then(() => (done = true));
    await clock.advance(99);
    expect(done).toBe(false);
    await clock.advance(1);
    await put;
    expect(done).toBe(true);
    expect(await faulty.get('k')).toBeDefined(); // gets are not delayed
  });

  it('a torn write that fails stores only the first bytes', async () => {
    const { inner, faulty } = setup();
    const rule = faulty.addRule({ type: 'tear-write', keepBytes: 3, outcome: 'fail', keyPrefix: 'wal/' });
    expect(await outcome(faulty.get('wal/1'))).toBe('ok'); // gets never match a tear rule
    expect(await outcome(faulty.put('wal/1', text('abcdef')))).toMatchObject({ code: 'STORE_UNAVAILABLE', details: { injected: true, torn: true } });
    expect(fromText((await inner.get('wal/1'))!.data)).toBe('abc');
    expect(rule.fired).toBe(1);
    await faulty.put('wal/2', text('whole')); // the window (first put) has passed
    expect(fromText((await inner.get('wal/2'))!.data)).toBe('whole');
  });

  it('a torn write that succeeds returns the stored version of the truncated bytes', async () => {
    const { inner, faulty } = setup();
    faulty.addRule({ type: 'tear-write', keepBytes: 2, outcome: 'succeed', nth: 2 });
    await faulty.put('a', text('first'));
    const { version } = await faulty.put('b', text('second'));
    const stored = (await inner.get('b'))!;
    expect(fromText(stored.data)).toBe('se');
    expect(stored.version).toBe(version);
  });

  it('a torn write keeps the put preconditions', async () => {
    const { inner, faulty } = setup();
    await inner.put('k', text('original'));
    faulty.addRule({ type: 'tear-write', keepBytes: 1, outcome: 'succeed' });
    expect(await outcome(faulty.put('k', text('new'), { ifNoneMatch: '*' }))).toMatchObject({ code: 'PRECONDITION_FAILED' });
    expect(fromText((await inner.get('k'))!.data)).toBe('original');
  });

  it('crash() fails every later call until recover()', async () => {
    const { inner, faulty } = setup();
    await faulty.put('k', text('before'));
    faulty.crash();
    expect(faulty.isCrashed).toBe(true);
    for (const call of [() => faulty.get('k'), () => faulty.put('k', text('after')), () => faulty.delete('k'), () => listKeys(faulty)]) {
      expect(await outcome(call())).toMatchObject({ code: 'STORE_UNAVAILABLE', details: { injected: true, crashed: true } });
    }
    expect(fromText((await inner.get('k'))!.data)).toBe('before');
    faulty.recover();
    expect(fromText((await faulty.get('k'))!.data)).toBe('before');
  });

  it('a call in flight at the crash reports failure even though the store completed it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const inner = new MemoryObjectStore();
    const slow: ObjectStore = {
      get: (k, o) => inner.get(k, o),
      put: async (k, d, o) => {
        await gate;
        return inner.put(k, d, o);
      },
      delete: (k) => inner.delete(k),
      list: (p, o) => inner.list(p, o),
    };
    const faulty = new FaultyObjectStore(slow);
    const put = outcome(faulty.put('k', text('maybe')));
    faulty.crash();
    release();
    expect(await put).toMatchObject({ code: 'STORE_UNAVAILABLE', details: { crashed: true } });
    expect(fromText((await inner.get('k'))!.data)).toBe('maybe');
  });

  it('a crash during a listing fails the listing at its next step', async () => {
    const { faulty } = setup();
    for (const key of ['a', 'b', 'c']) await faulty.put(key, text(key));
    const seen: string[] = [];
    const result = await outcome(
      (async () => {
        for await (const { key } of faulty.list('')) {
          seen.push(key);
          if (key === 'a') faulty.crash();
        }
      })(),
    );
    expect(seen).toEqual(['a']);
    expect(result).toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('list faults apply when iteration starts, matching the prefix', async () => {
    const { faulty } = setup();
    await faulty.put('db/x', text('x'));
    faulty.addRule({ type: 'fail', ops: ['list'], keyPrefix: 'db/', count: Infinity });
    expect(await outcome(listKeys(faulty, 'db/'))).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(await listKeys(faulty, '')).toEqual(['db/x']); // prefix '' does not start with 'db/'
  });

  it('rules can be removed at runtime', async () => {
    const { faulty } = setup();
    const rule = faulty.addRule({ type: 'fail', count: Infinity });
    expect(await outcome(faulty.get('k'))).not.toBe('ok');
    rule.remove();
    expect(await outcome(faulty.get('k'))).toBe('ok');
    expect(rule.matched).toBe(1);
  });

  it('a failing rule wins over a tear on the same call, and nothing is stored', async () => {
    const { inner, faulty } = setup();
    faulty.addRule({ type: 'tear-write', keepBytes: 1, outcome: 'succeed' });
    faulty.addRule({ type: 'fail', ops: ['put'] });
    expect(await outcome(faulty.put('k', text('xyz')))).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(await inner.get('k')).toBeUndefined();
  });

  it('inner errors pass through untouched', async () => {
    const { faulty } = setup();
    expect(await outcome(faulty.get('/bad'))).toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
