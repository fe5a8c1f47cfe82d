/**
 * A run's history (caller KV under `workflow/fn/`) is deleted when the run ends: succeeded,
 * failed (its own error or a step out of attempts) or cancelled (while it sleeps, or inside a
 * step); a step still running when the function returned does not write after the ending.
 */
import { describe, expect, it } from 'vitest';
import { defineWorkflow } from '../../../../src/core/workflow/index.js';
import { Counter, deferred, eventually, fnWorld, resultOf, sleeping, type FnWorld, type StoreFactory } from './fn-harness.js';

/** Records the prefix of every `kvScan` on the world's current queue handle until `stop()`. */
function recordScans(w: FnWorld): { readonly prefixes: string[]; stop(): void } {
  const queue = w.queue;
  const kvScan = queue.kvScan.bind(queue);
  const prefixes: string[] = [];
  queue.kvScan = (prefix, options) => {
    prefixes.push(new TextDecoder().decode(prefix));
    return kvScan(prefix, options);
  };
  return { prefixes, stop: () => (queue.kvScan = kvScan) };
}

const bufferedSignals = async (w: FnWorld): Promise<unknown[]> => (await w.queue.kvScan(new TextEncoder().encode('workflow/signal-buf/'))).entries;

export function defineHistorySuite(name: string, factory: StoreFactory): void {
  describe(`workflow functions: history (${name})`, () => {
    it('one event per ctx call while the run is active, none once it succeeded', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'h',
        async run(ctx) {
          await ctx.step('a', () => 1);
          ctx.now();
          await ctx.sleep(10);
          return 'ok';
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'ok' });
      await sleeping(runtime, 'ok');
      const keys = await w.historyKeys();
      expect(keys).toHaveLength(3);
      expect(keys.every((k) => k.includes('/ok/'))).toBe(true);
      await w.advance(10);
      expect(await resultOf(run)).toBe('ok');
      expect(await w.historyKeys()).toEqual([]);
    });

    it('a run that ends in its first delivery deletes what it wrote without scanning for it; a buffered signal still goes', async () => {
      const w = await fnWorld(factory);
      const inside = deferred();
      const release = deferred();
      const wf = defineWorkflow({
        name: 'h-one-delivery',
        async run(ctx) {
          await ctx.step('a', () => 1);
          ctx.now();
          await ctx.step('b', async () => {
            inside.resolve();
            await release.promise;
            return 2;
          });
          return 'done';
        },
      });
      const runtime = w.start([wf]);
      const scans = recordScans(w);
      const run = await runtime.start(wf, undefined, { runId: 'one' });
      await inside.promise;
      // A signal the run never waits for is buffered under the run's id, and must go with it.
      expect(await runtime.signal('one', 'unused', 1)).toBe('buffered');
      release.resolve();
      expect(await resultOf(run)).toBe('done');
      scans.stop();
      expect(scans.prefixes.filter((p) => p.startsWith('workflow/fn/'))).toEqual([]);
      expect(await w.historyKeys()).toEqual([]);
      expect(await bufferedSignals(w)).toEqual([]);
    });

    it('a run submitted through this handle that never had a signal buffered ends without looking for signals or history', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'h-no-signal',
        async run(ctx) {
          await ctx.step('a', () => 1);
          return 'done';
        },
      });
      const runtime = w.start([wf]);
      const scans = recordScans(w);
      const run = await runtime.start(wf, undefined, { runId: 'quiet' });
      expect(await resultOf(run)).toBe('done');
      scans.stop();
      expect(scans.prefixes.filter((p) => p.startsWith('workflow/fn/') || p.startsWith('workflow/signal-buf/'))).toEqual([]);
      expect(await w.historyKeys()).toEqual([]);
    });

    it('a run submitted before a restart has the signals buffered for it looked for and deleted at its ending', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'h-restart-signal',
        async run(ctx) {
          await ctx.sleep(10);
          return 'done';
        },
      });
      let runtime = w.start([wf]);
      await runtime.start(wf, undefined, { runId: 'before' });
      await sleeping(runtime, 'before');
      expect(await runtime.signal('before', 'unused', 1)).toBe('buffered');
      await w.restart();
      runtime = w.start([wf]);
      const scans = recordScans(w);
      await w.advance(10);
      await eventually(async () => expect((await runtime.readStatus('before', { includeFinished: true }))?.state).toBe('succeeded'));
      scans.stop();
      expect(scans.prefixes).toContain('workflow/signal-buf/before#');
      expect(await bufferedSignals(w)).toEqual([]);
    });

    it('deleted when the run fails after a replay (an uncaught StepFailedError)', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'h-fail',
        async run(ctx) {
          await ctx.step('a', () => 1);
          await ctx.sleep(10);
          await ctx.step('b', () => {
            throw new Error('no');
          }, { retries: 0 });
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'f' });
      await sleeping(runtime, 'f');
      await w.advance(10);
      await expect(resultOf(run)).rejects.toMatchObject({ code: 'RUN_FAILED', status: 'failed' });
      expect(await w.historyKeys()).toEqual([]);
    });

    it('deleted when a sleeping run is cancelled', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'h-cancel',
        async run(ctx) {
          await ctx.step('a', () => 1);
          await ctx.sleep(60_000);
          return 'woke';
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'c' });
      await sleeping(runtime, 'c');
      expect(await w.historyKeys()).toHaveLength(2);
      await run.cancel();
      await expect(resultOf(run)).rejects.toMatchObject({ status: 'cancelled' });
      expect(await w.historyKeys()).toEqual([]);
    });

    it('deleted when a run is cancelled inside a step', async () => {
      const w = await fnWorld(factory);
      const started = deferred();
      const wf = defineWorkflow({
        name: 'h-cancel-step',
        async run(ctx) {
          await ctx.step('a', () => 1);
          return ctx.step('b', ({ signal }) => {
            started.resolve();
            return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
          });
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'cs' });
      await started.promise;
      await run.cancel();
      await expect(resultOf(run)).rejects.toMatchObject({ status: 'cancelled' });
      expect(await w.historyKeys()).toEqual([]);
    });

    it('a replay reads a history of more than one scan page (1,002 events) and answers every call from it', async () => {
      const w = await fnWorld(factory);
      const seen: number[][] = [];
      const wf = defineWorkflow({
        name: 'long',
        async run(ctx) {
          const values: number[] = [];
          for (let i = 0; i < 1000; i++) values.push(ctx.random());
          seen.push(values);
          const last = await ctx.step('last', () => values.length);
          await ctx.sleep(10);
          return last;
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'long' });
      await sleeping(runtime, 'long');
      expect(await w.historyKeys()).toHaveLength(1002);
      await w.advance(10);
      expect(await resultOf(run)).toBe(1000);
      expect(seen).toHaveLength(2);
      expect(seen[1]).toEqual(seen[0]);
      expect(await w.historyKeys()).toEqual([]);
    });

    it('a step still running when the function returned writes nothing after the ending', async () => {
      const w = await fnWorld(factory);
      const release = deferred<string>();
      const calls = new Counter();
      let orphan: Promise<string> | undefined;
      const wf = defineWorkflow({
        name: 'h-orphan',
        async run(ctx) {
          await ctx.step('a', () => 1);
          orphan = ctx.step('fire-and-forget', async () => {
            calls.hit('orphan');
            return release.promise;
          });
          return 'returned';
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'o' });
      expect(await resultOf(run)).toBe('returned');
      expect(await w.historyKeys()).toEqual([]);
      await eventually(() => calls.get('orphan') === 1);
      release.resolve('late');
      // The orphan's step promise settles only after a write: it stays pending instead.
      const settled = await Promise.race([orphan!.then(() => 'settled'), new Promise((r) => setTimeout(() => r('pending'), 50))]);
      expect(settled).toBe('pending');
      expect(await w.historyKeys()).toEqual([]);
    });
  });
}
