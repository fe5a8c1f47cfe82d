/** The memo store over any object store: paths, scoping, typed helpers and clearing. */
import { describe, expect, it } from 'vitest';
import { decodeRecord, encodeRecord } from '../../../src/core/codec.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import { PAYLOAD_OBJECT_KIND } from '../../../src/core/queue/storage/payload-offload.js';
import { sealObject } from '../../../src/core/sealed-object.js';
import { MemoStore } from '../../../src/core/workflow/index.js';
import { b, makeHarness, RecordingHook, s, type StoreFactory } from './harness.js';

async function keysOf(store: ObjectStore, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for await (const info of store.list(prefix)) out.push(info.key);
  return out;
}

export function defineMemoSuite(name: string, factory: StoreFactory): void {
  describe(`memo store (${name})`, () => {
    const make = async (prefix = 'memo') => {
      const store = await factory();
      return { store, memo: new MemoStore(store, prefix) };
    };

    it('get of a missing key is null; put round-trips, overwrites, and keeps an empty value', async () => {
      const { memo } = await make();
      const m = memo.newMemo('run-1', 0);
      expect(await m.get('k')).toBeNull();
      await m.put('k', b('v1'));
      expect(s((await m.get('k'))!)).toBe('v1');
      await m.put('k', b('v2'));
      expect(s((await m.get('k'))!)).toBe('v2');
      await m.put('empty', new Uint8Array(0));
      expect(await m.get('empty')).toEqual(new Uint8Array(0));
    });

    it('isolates runs, steps and the run scope', async () => {
      const { memo } = await make();
      await memo.newMemo('run-1', 0).put('k', b('r1s0'));
      await memo.newMemo('run-1', 1).put('k', b('r1s1'));
      await memo.newRunMemo('run-1').put('k', b('r1run'));
      await memo.newMemo('run-2', 0).put('k', b('r2s0'));
      expect(s((await memo.newMemo('run-1', 0).get('k'))!)).toBe('r1s0');
      expect(s((await memo.newMemo('run-1', 1).get('k'))!)).toBe('r1s1');
      expect(s((await memo.newRunMemo('run-1').get('k'))!)).toBe('r1run');
      expect(s((await memo.newMemo('run-2', 0).get('k'))!)).toBe('r2s0');
      expect(memo.newRunMemo('run-1').stepNumber).toBeNull();
      expect(memo.newMemo('run-1', 3).stepNumber).toBe(3);
    });

    it('accepts awkward keys (empty, slashes, spaces, unicode, 10 000 characters)', async () => {
      const { memo } = await make();
      const m = memo.newMemo('run-1', 0);
      const keys = ['', '/', 'a/b/../c', 'with spaces', 'ünïcødé ✓ 日本', 'x'.repeat(10_000)];
      for (const [i, k] of keys.entries()) await m.put(k, b(String(i)));
      for (const [i, k] of keys.entries()) expect(s((await m.get(k))!), k.slice(0, 20)).toBe(String(i));
    });

    it('stores entries at the documented paths', async () => {
      const { store, memo } = await make('memo');
      await memo.newMemo('run-1', 0).put('k', b('1'));
      await memo.newRunMemo('run-1').put('k', b('2'));
      await memo.newMemo('run-1', 0).contentPut('hello', b('3'));
      expect(await keysOf(store)).toEqual([
        'memo/memos/run-1/0/1adc4f8ba16f15ba2172dab9b84bb9ba73f5cf4f156f50df4dda663b4f9c61ba',
        'memo/memos/run-1/0/8254c329a92850f6d539dd376f4816ee2764517da5e0235514af433164480d7a',
        'memo/memos/run-1/run/8254c329a92850f6d539dd376f4816ee2764517da5e0235514af433164480d7a',
      ]);
    });

    it('content keys distinguish operations, ignore object key order, and stay step-scoped', async () => {
      const { memo } = await make();
      const m0 = memo.newMemo('run-1', 0);
      const k1 = await m0.contentKey({ operation: 'draft', payload: b('p') });
      const k2 = await m0.contentKey({ payload: b('p'), operation: 'draft' });
      const k3 = await m0.contentKey({ operation: 'review', payload: b('p') });
      expect(k1).toMatch(/^content:[0-9a-f]{64}$/);
      expect(k1).toBe(k2);
      expect(k1).not.toBe(k3);
      await m0.contentPut({ operation: 'draft', payload: b('p') }, b('cached'));
      expect(s((await m0.get(k1))!)).toBe('cached');
      expect(await memo.newMemo('run-1', 1).contentGet({ operation: 'draft', payload: b('p') })).toBeNull();
    });

    it('content-key serialization errors surface as INVALID_ARGUMENT', async () => {
      const { memo } = await make();
      const m = memo.newMemo('run-1', 0);
      await expect(m.contentKey({ f: () => 1 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'serialization' } });
      await expect(m.contentKey(new Map([['a', 1]]))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    });

    it('memoized runs the computation once and stores named MessagePack', async () => {
      const { memo } = await make();
      const m = memo.newMemo('run-1', 0);
      let runs = 0;
      const compute = async () => {
        runs++;
        return { title: 'draft', words: 42 };
      };
      expect(await m.memoized('draft', compute)).toEqual({ title: 'draft', words: 42 });
      expect(await m.memoized('draft', compute)).toEqual({ title: 'draft', words: 42 });
      expect(runs).toBe(1);
      expect(decodeRecord((await m.get('draft'))!)).toEqual({ title: 'draft', words: 42 });
    });

    // Issue #13: a Map was stored as an empty MessagePack map, so a memo hit returned {}.
    it('a memo hit returns Map, Set, Date, BigInt, typed arrays and undefined exactly as computed', async () => {
      const { memo } = await make();
      const m = memo.newMemo('run-1', 0);
      const value = {
        byId: new Map<string, unknown>([['a', { at: new Date(1_700_000_000_000), tags: new Set(['x', 'y']) }]]),
        total: 2n ** 70n,
        samples: new Float64Array([1.5, -0]),
        raw: Uint8Array.of(1, 2),
        gaps: [1, undefined, 3],
        missing: undefined,
      };
      let runs = 0;
      const first = await m.memoized('k', () => (runs++, value));
      const hit = await m.memoized('k', () => (runs++, 'recomputed'));
      expect(runs).toBe(1);
      expect(first).toBe(value);
      expect(hit).toStrictEqual(value);
      const typed = hit as unknown as typeof value;
      expect(typed.byId).toBeInstanceOf(Map);
      expect((typed.byId.get('a') as { tags: unknown }).tags).toBeInstanceOf(Set);
      expect(Object.is(typed.samples[1], -0)).toBe(true);
      expect('missing' in typed).toBe(true);
      expect(await m.memoized('nothing', () => undefined)).toBeUndefined();
      expect(await m.memoized('nothing', () => 'recomputed')).toBeUndefined();
    });

    it('a value that cannot round-trip rejects with INVALID_ARGUMENT (serialization) and stores nothing', async () => {
      const { memo } = await make();
      const m = memo.newMemo('run-1', 0);
      const bad: [unknown, string][] = [
        [() => 1, 'value'],
        [Symbol('s'), 'value'],
        [{ nested: [new (class Widget {})()] }, 'value.nested[0]'],
        [new Map([['k', { f: () => 1 }]]), 'value.<map value 0>.f'],
      ];
      for (const [value, path] of bad) {
        const err = await m.memoized('bad', () => value).catch((e: unknown) => e);
        expect(err).toMatchObject({ code: 'INVALID_ARGUMENT', name: 'InvalidArgumentError', details: { reason: 'serialization', path, runId: 'run-1', key: '"bad"' } });
        expect((err as Error).message).toMatch(/^memo value cannot be stored: .* runId=run-1 step=0 key="bad" path=/);
        expect(await m.get('bad')).toBeNull();
      }
    });

    // Issue #13: the encode error was a plain Error, so the step retried as transient and paid
    // for the computation again on every attempt.
    it('a step whose memoized value cannot be stored fails its run permanently after one computation', async () => {
      const h = await makeHarness(factory);
      const hook = new RecordingHook();
      let computations = 0;
      const { runtime } = h.start(async (step) => {
        await step.memo.memoized('expensive', () => {
          computations++;
          return { answer: 42, format: () => 'a function' };
        });
        throw new Error('unreachable');
      }, hook);
      const { runId, jobId } = await runtime.submit({ maxAttemptsPerStep: 5 });
      const outcome = await hook.first();
      expect(outcome).toMatchObject({ runId, status: 'failed', finalStep: 0 });
      expect(outcome.error).toContain('memo value cannot be stored: a function cannot be stored');
      expect(outcome.error).toContain('path=value.format');
      expect(computations).toBe(1);
      expect(await h.queue.getJob(jobId)).toMatchObject({ status: 'dead', attempts: 1 });
    });

    it('a failed computation stores nothing; an undecodable or invalid entry is recomputed and overwritten', async () => {
      const { memo } = await make();
      const m = memo.newMemo('run-1', 0);
      await expect(m.memoized('k', async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
      expect(await m.get('k')).toBeNull();
      await m.put('k', Uint8Array.of(0xc1));
      expect(await m.memoized('k', () => 'fresh')).toBe('fresh');
      expect(decodeRecord((await m.get('k'))!)).toBe('fresh');
      await m.put('typed', encodeRecord({ wrong: true }));
      const isDraft = (v: unknown): v is { title: string } => typeof (v as { title?: unknown })?.title === 'string';
      expect(await m.memoized('typed', () => ({ title: 'ok' }), { validate: isDraft })).toEqual({ title: 'ok' });
      expect(await m.memoized('typed', () => ({ title: 'not again' }), { validate: isDraft })).toEqual({ title: 'ok' });
    });

    // Issue #12: a bit-flipped memo entry decoded to a different value without any error.
    const damages: [string, (stored: Uint8Array) => Uint8Array, string][] = [
      ['a flipped bit in the value', (o) => { const x = o.slice(); x[x.length - 5] ^= 0x02; return x; }, 'checksum mismatch'],
      ['truncation', (o) => o.slice(0, o.length - 2), 'length mismatch'],
      ['emptying', () => new Uint8Array(0), 'empty'],
      ['an offloaded payload object in its place', (o) => sealObject(PAYLOAD_OBJECT_KIND, o), 'wrong magic'],
    ];
    it.each(damages)('an entry damaged by %s is warned about naming its object, read as absent, recomputed and overwritten', async (_, damage, problem) => {
      const store = await factory();
      const warnings: { message: string; error: unknown }[] = [];
      const memo = new MemoStore(store, 'memo', (message, error) => void warnings.push({ message, error }));
      const m = memo.newMemo('run-1', 0);
      let runs = 0;
      const compute = () => `value ${++runs}`;
      expect(await m.memoized('k', compute)).toBe('value 1');
      const [key] = await keysOf(store, 'memo/memos/run-1/0/');
      await store.put(key, damage((await store.get(key))!.data.slice()));

      expect(await m.get('k')).toBeNull();
      expect(warnings).toHaveLength(1);
      expect(warnings[0].message).toContain(`object=${key}`);
      expect(warnings[0].error).toMatchObject({ code: 'CORRUPT_DATA', details: { object: key, problem } });

      expect(await m.memoized('k', compute)).toBe('value 2');
      expect(runs).toBe(2);
      expect(warnings).toHaveLength(2);
      // The recomputed value replaced the damaged entry: it is served from now on, without warnings.
      expect(await m.memoized('k', compute)).toBe('value 2');
      expect(decodeRecord((await m.get('k'))!)).toBe('value 2');
      expect(runs).toBe(2);
      expect(warnings).toHaveLength(2);
    });

    it('memoizedByContent stores under the content key', async () => {
      const { memo } = await make();
      const m = memo.newMemo('run-1', 0);
      const input = { operation: 'sum', values: [1, 2, 3] };
      expect(await m.memoizedByContent(input, () => 6)).toBe(6);
      expect(decodeRecord((await m.get(await m.contentKey(input)))!)).toBe(6);
    });

    it('clearMemosForRun removes step, run-scope and step-output entries of that run only', async () => {
      const { store, memo } = await make('memo');
      await memo.newMemo('run', 0).put('a', b('1'));
      await memo.newRunMemo('run').put('b', b('2'));
      await store.put('memo/step-outputs/run/0/abc', b('3'));
      await memo.newMemo('run-suffix', 0).put('a', b('keep'));
      await memo.newMemo('other', 0).put('a', b('keep'));
      expect(await memo.clearMemosForRun('run')).toBe(3);
      expect(await memo.clearMemosForRun('run')).toBe(0);
      expect(await keysOf(store)).toHaveLength(2);
      expect(s((await memo.newMemo('run-suffix', 0).get('a'))!)).toBe('keep');
      await expect(memo.clearMemosForRun('')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    });

    it('two memo stores over one backing store share entries', async () => {
      const store = await factory();
      await new MemoStore(store, 'shared').newMemo('r', 0).put('k', b('v'));
      expect(s((await new MemoStore(store, 'shared').newMemo('r', 0).get('k'))!)).toBe('v');
    });
  });
}
