/**
 * Finished runs (issue 25): the record each ending commits, read back through `getRun` /
 * `readStatus` (`includeFinished`), `listRuns` by terminal status, `result`, the timeline and a
 * `WorkflowReader`; kept after a reopen of the store; swept after `outcomeRetentionMs` (mock
 * clock); absent with retention 0. A reusable suite over any store factory.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { utf8 } from '../../../src/core/bytes.js';
import { MockClock } from '../../../src/core/clock.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import { Queue } from '../../../src/core/queue/index.js';
import {
  isFinishedRun,
  NoopTerminalHook,
  StepError,
  StepOutcome,
  WorkflowReader,
  WorkflowRuntime,
  type FinishedRun,
  type RunnerHandle,
  type StepRunner,
  type StepRunnerFunction,
  type WorkflowRuntimeOptions,
} from '../../../src/core/workflow/index.js';
import { b, deferred, eventually, kvKeys, s, silentLogger, type StoreFactory } from './harness.js';

const DAY = 86_400_000;
const START = 1_700_000_000_000;
let counter = 0;

interface World {
  readonly store: ObjectStore;
  readonly clock: MockClock;
  readonly path: string;
  queue: Queue;
  /** A runtime on the current queue, its worker started (stopped when the test ends). */
  start(runner: StepRunner, options?: WorkflowRuntimeOptions): WorkflowRuntime;
  /** Stops the workers, closes the queue and opens the store again: what a new process sees. */
  reopen(): Promise<void>;
  reader(): Promise<WorkflowReader>;
}

async function world(factory: StoreFactory): Promise<World> {
  const store = await factory();
  const clock = new MockClock(START);
  const path = `finished-${++counter}`;
  const open = (): Promise<Queue> =>
    Queue.open(store, path, { clock, reaperIntervalMs: 1e12, schedulerIntervalMs: 1e12, logger: silentLogger, defaultQueueConfig: { retryBackoffBaseMs: 0 } });
  const workers: RunnerHandle[] = [];
  const readers: WorkflowReader[] = [];
  const stop = async (): Promise<void> => {
    for (const w of workers.splice(0)) await w.shutdown().catch(() => undefined);
  };
  const w: World = {
    store,
    clock,
    path,
    queue: await open(),
    start(runner, options = {}) {
      const runtime = new WorkflowRuntime(w.queue, store, runner, new NoopTerminalHook(), { logger: silentLogger, ...options });
      workers.push(runtime.spawn());
      return runtime;
    },
    async reopen() {
      await stop();
      await w.queue.close();
      w.queue = await open();
    },
    async reader() {
      const reader = await WorkflowReader.open(store, path, { pollIntervalMs: null, logger: false });
      readers.push(reader);
      return reader;
    },
  };
  onTestFinished(async () => {
    await stop();
    for (const r of readers) await r.close().catch(() => undefined);
    await w.queue.close().catch(() => undefined);
  });
  return w;
}

/** A runner whose verdict is chosen by the run id's first segment. */
const verdicts: StepRunnerFunction = async (step) => {
  const kind = step.runId.split('-')[0];
  if (kind === 'ok') return StepOutcome.succeed(utf8(`done:${s(step.payload)}`));
  if (kind === 'two' && step.stepNumber === 0) return StepOutcome.continueNow(step.payload);
  if (kind === 'two') return StepOutcome.succeed(step.payload);
  if (kind === 'fail') return StepOutcome.fail('not eligible');
  if (kind === 'bad') throw StepError.permanent('bad input');
  if (kind === 'quit') return StepOutcome.cancel('user gave up');
  if (kind === 'park') return step.stepNumber === 0 ? StepOutcome.continueOnSignal(step.payload, `key-${step.runId}`, DAY) : StepOutcome.fail('woken');
  throw new Error(`no verdict for ${step.runId}`);
};

export function defineFinishedRunsSuite(name: string, factory: StoreFactory): void {
  describe(`finished runs (${name})`, () => {
    it('a succeeded run is read back by result, getRun, readStatus, listRuns and the timeline; the defaults stay active-only', async () => {
      const w = await world(factory);
      const runtime = w.start(verdicts);
      const { runId } = await runtime.submit({ runId: 'ok-1', input: b('in'), headers: { owner: 'ann' } });
      const outcome = await runtime.result(runId);
      const expected: FinishedRun = {
        runId,
        status: 'succeeded',
        result: b('done:in'),
        error: null,
        headers: { owner: 'ann' },
        finalStep: 0,
        endedAtMs: START,
        submittedAtMs: START,
        attempts: 1,
        resultBytes: 7,
        omitted: [],
      };
      expect(outcome).toEqual(expected);
      expect(isFinishedRun(outcome)).toBe(true);

      expect(await runtime.getRun(runId, { includeFinished: true })).toEqual(expected);
      expect(await runtime.readStatus(runId, { includeFinished: true })).toEqual({ runId, state: 'succeeded', currentStep: 0 });
      // Callers that read null as "not active" keep that answer.
      expect(await runtime.getRun(runId)).toBeNull();
      expect(await runtime.readStatus(runId)).toBeNull();
      expect(runtime.status(runId)).toBeNull();
      expect((await runtime.listRuns()).runs).toEqual([]);

      expect((await runtime.listRuns({ status: 'succeeded' })).runs).toEqual([expected]);
      expect((await runtime.listRuns({ status: ['failed', 'cancelled'] })).runs).toEqual([]);
      const timeline = await runtime.getRunTimeline(runId);
      expect(timeline).toMatchObject({ status: 'terminated', headers: { owner: 'ann' }, terminatedAtMs: START, terminal: { status: 'succeeded', finalStep: 0, error: null, source: 'record' } });
      expect(s(timeline.terminal!.result!)).toBe('done:in');
    });

    it('records failures and cancellations with their reason; null error tells an external cancel', async () => {
      const w = await world(factory);
      const runtime = w.start(verdicts);
      for (const id of ['fail-1', 'bad-1', 'quit-1', 'park-1']) await runtime.submit({ runId: id, maxAttemptsPerStep: 4 });
      await eventually(async () => (await runtime.getRun('park-1'))?.state === 'waiting-for-signal');
      expect(await runtime.cancel('park-1')).toBe(true);

      expect(await runtime.result('fail-1')).toMatchObject({ status: 'failed', error: 'not eligible', finalStep: 0, attempts: 1, result: null, resultBytes: null });
      expect(await runtime.result('bad-1')).toMatchObject({ status: 'failed', error: 'bad input', finalStep: 0, attempts: 1 });
      expect(await runtime.result('quit-1')).toMatchObject({ status: 'cancelled', error: 'user gave up', finalStep: 0 });
      // Cancelled while its step waited: the ending did not run a try of that step.
      expect(await runtime.result('park-1')).toMatchObject({ status: 'cancelled', error: null, finalStep: 1, attempts: null, submittedAtMs: START });

      expect((await runtime.listRuns({ status: 'failed' })).runs.map((r) => r.runId)).toEqual(['bad-1', 'fail-1']);
      expect((await runtime.listRuns({ status: 'cancelled', limit: 1 })).runs.map((r) => r.runId)).toEqual(['park-1']);
      expect(await runtime.readStatus('park-1', { includeFinished: true })).toEqual({ runId: 'park-1', state: 'cancelled', currentStep: 1 });
      // One listing is of active runs or of finished ones.
      await expect(runtime.listRuns({ status: ['pending', 'failed'] as never })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_status' } });
    });

    it('result waits for an active run across its steps, and resolves at once once it ended', async () => {
      const w = await world(factory);
      const gate = deferred();
      const runtime = w.start(async (step) => {
        if (step.stepNumber === 0) return StepOutcome.continueNow(step.payload);
        await gate.promise;
        return StepOutcome.succeed(b('late'));
      });
      const { runId } = await runtime.submit({ runId: 'slow-1' });
      let settled: FinishedRun | undefined;
      const waiting = runtime.result(runId).then((r) => (settled = r));
      await eventually(async () => (await runtime.readStatus(runId))?.currentStep === 1);
      expect(settled).toBeUndefined();
      gate.resolve();
      expect(await waiting).toMatchObject({ runId, status: 'succeeded', finalStep: 1, attempts: 1 });
      expect(s((await runtime.result(runId)).result!)).toBe('late');
    });

    it('result: NOT_FOUND for an unknown id, TIMEOUT, CANCELLED, INVALID_ARGUMENT for bad calls', async () => {
      const w = await world(factory);
      const gate = deferred();
      const runtime = w.start(async () => {
        await gate.promise;
        return StepOutcome.succeed(b(''));
      });
      const unknown = await runtime.result('nobody').catch((e: unknown) => e);
      expect(unknown).toMatchObject({ code: 'NOT_FOUND', details: { runId: 'nobody' } });
      expect((unknown as Error).message).toMatch(/runId=nobody/);
      expect((unknown as Error).message).toMatch(/swept/);
      await expect(runtime.result('has space')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_run_id' } });
      await expect(runtime.result('x', { timeoutMs: -1 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { option: 'timeoutMs' } });
      await expect(runtime.result('x', { timeout: 5 } as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { option: 'timeout' } });
      await expect(runtime.getRun('x', { includeFinished: 'yes' } as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { option: 'includeFinished' } });

      await runtime.submit({ runId: 'held-1' });
      const timedOut = runtime.result('held-1', { timeoutMs: 1000 }).catch((e: unknown) => e);
      await eventually(() => w.clock.pendingSleepers > 0);
      await w.clock.advance(1000);
      expect(await timedOut).toMatchObject({ code: 'TIMEOUT', details: { runId: 'held-1', timeoutMs: 1000 } });
      const stop = new AbortController();
      const cancelled = runtime.result('held-1', { signal: stop.signal }).catch((e: unknown) => e);
      stop.abort();
      expect(await cancelled).toMatchObject({ code: 'CANCELLED', details: { runId: 'held-1' } });
      gate.resolve();
      expect(await runtime.result('held-1')).toMatchObject({ status: 'succeeded' });
    });

    it('a finished run is read alike after the store is opened again and from a WorkflowReader', async () => {
      const w = await world(factory);
      const first = w.start(verdicts);
      await first.submit({ runId: 'two-1', input: b('x'), headers: { k: 'v' } });
      await first.submit({ runId: 'fail-2' });
      const before = await first.result('two-1');
      await first.result('fail-2');
      await w.reopen();

      const second = w.start(verdicts);
      expect(await second.result('two-1')).toEqual(before);
      expect(await second.getRun('two-1', { includeFinished: true })).toEqual(before);
      const reader = await w.reader();
      expect(await reader.getRun('two-1', { includeFinished: true })).toEqual(before);
      expect(await reader.getRun('two-1')).toBeNull();
      expect(await reader.readStatus('two-1')).toBeNull();
      expect(await reader.readStatus('two-1', { includeFinished: true })).toEqual({ runId: 'two-1', state: 'succeeded', currentStep: 1 });
      expect((await reader.listRuns({ status: ['succeeded', 'failed'] })).runs.map((r) => [r.runId, r.status])).toEqual([
        ['fail-2', 'failed'],
        ['two-1', 'succeeded'],
      ]);
      expect((await reader.getRunTimeline('two-1')).terminal).toMatchObject({ status: 'succeeded', finalStep: 1, source: 'record' });

      // A run submitted before the reopen and finished after it: its submission time is read back.
      const parked = await second.submit({ runId: 'park-2' });
      await eventually(async () => (await second.getRun(parked.runId))?.state === 'waiting-for-signal');
      await w.clock.advance(5000);
      await w.reopen();
      const third = w.start(verdicts);
      expect(await third.signal('key-park-2', b('go'))).toBe('delivered');
      const parkedDone = await third.result('park-2');
      expect(parkedDone).toMatchObject({ status: 'failed', error: 'woken', finalStep: 1, endedAtMs: START + 5000, attempts: 1 });
      // Learned from the run record in the background at the claim: known unless the step beat that read.
      expect([START, null]).toContain(parkedDone.submittedAtMs);
    });

    it('retention: swept after the window by the background sweep, never before; a later run under the id keeps its record', async () => {
      const w = await world(factory);
      const runtime = w.start(verdicts, { outcomeRetentionMs: 10_000 });
      await runtime.submit({ runId: 'ok-a' });
      expect((await runtime.result('ok-a')).endedAtMs).toBe(START);
      expect(await kvKeys(w.queue, 'workflow/outcomes/')).toEqual(['workflow/outcomes/workflow-steps/ok-a']);
      expect(await kvKeys(w.queue, 'workflow/ended/')).toEqual([`workflow/ended/workflow-steps/${String(START).padStart(20, '0')}/ok-a`]);

      await w.clock.advance(6000);
      // Submitted again: a new run, which ends 6 s after the first.
      expect((await runtime.submit({ runId: 'ok-a', input: b('2') })).newlySubmitted).toBe(true);
      // Active first: the new run is awaited, not answered with the earlier record.
      const second = await runtime.result('ok-a');
      expect([s(second.result!), second.endedAtMs]).toEqual(['done:2', START + 6000]);
      await runtime.submit({ runId: 'ok-b' });
      await runtime.result('ok-b');

      // Exactly one window after the first ending: still kept (strict cutoff).
      await w.clock.advance(4000);
      expect(await runtime.sweepFinishedRunsNow()).toBe(0);
      // Past it: the first ending's index entry goes, but the record is the second run's and stays.
      await w.clock.advance(1);
      expect(await runtime.sweepFinishedRunsNow()).toBe(0);
      expect(await kvKeys(w.queue, 'workflow/ended/')).toHaveLength(2);
      expect((await runtime.getRun('ok-a', { includeFinished: true }))?.runId).toBe('ok-a');

      // The background loop (every min(retention, 1 h): next at +20 s) removes both once their window passed.
      await w.clock.advance(10_000);
      await eventually(async () => (await kvKeys(w.queue, 'workflow/ended/')).length === 0);
      expect(await kvKeys(w.queue, 'workflow/outcomes/')).toEqual([]);
      expect(await runtime.getRun('ok-a', { includeFinished: true })).toBeNull();
      const gone = await runtime.result('ok-b').catch((e: unknown) => e);
      expect(gone).toMatchObject({ code: 'NOT_FOUND' });
      expect((gone as Error).message).toMatch(/outcomeRetentionMs=10000/);
    });

    it('a malformed index entry is dropped by the sweep; another runtime on the handle keeps its own records', async () => {
      const w = await world(factory);
      const a = w.start(verdicts, { outcomeRetentionMs: 1000 });
      const other = w.start(verdicts, { queueName: 'other/steps', outcomeRetentionMs: 60_000 });
      await a.submit({ runId: 'ok-mine' });
      await other.submit({ runId: 'ok-theirs' });
      await a.result('ok-mine');
      await other.result('ok-theirs');
      expect(await kvKeys(w.queue, 'workflow/outcomes/other%2Fsteps/')).toEqual(['workflow/outcomes/other%2Fsteps/ok-theirs']);
      expect(await a.getRun('ok-theirs', { includeFinished: true })).toBeNull();
      await expect(a.result('ok-theirs')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await w.queue.kvPut(b('workflow/ended/workflow-steps/not-a-time/x'), new Uint8Array(0));
      await w.clock.advance(2000);
      // The explicit pass and the background one may share the work: deletes compare first.
      await a.sweepFinishedRunsNow();
      await eventually(async () => (await kvKeys(w.queue, 'workflow/ended/workflow-steps/')).length === 0);
      expect(await a.getRun('ok-mine', { includeFinished: true })).toBeNull();
      expect((await other.result('ok-theirs')).status).toBe('succeeded');
    });

    it('outcomeRetentionMs 0 writes nothing: finished runs are unknown, as before', async () => {
      const w = await world(factory);
      const runtime = w.start(verdicts, { outcomeRetentionMs: 0 });
      await runtime.submit({ runId: 'ok-off' });
      await eventually(async () => (await w.queue.kvGet(b('workflow/runs/ok-off'))) === undefined);
      expect(await kvKeys(w.queue, 'workflow/')).toEqual([]);
      expect(await runtime.getRun('ok-off', { includeFinished: true })).toBeNull();
      expect((await runtime.listRuns({ status: 'succeeded' })).runs).toEqual([]);
      const e = await runtime.result('ok-off').catch((x: unknown) => x);
      expect(e).toMatchObject({ code: 'NOT_FOUND' });
      expect((e as Error).message).toMatch(/outcomeRetentionMs=0/);
      expect(await runtime.sweepFinishedRunsNow()).toBe(0);
    });

    it('rejects bad outcomeRetentionMs values with INVALID_CONFIG naming the value; Infinity keeps records', async () => {
      const w = await world(factory);
      const thrown = (value: unknown): unknown => {
        try {
          new WorkflowRuntime(w.queue, w.store, verdicts, new NoopTerminalHook(), { logger: silentLogger, outcomeRetentionMs: value as number });
        } catch (e) {
          return e;
        }
        return undefined;
      };
      for (const [value, shown] of [
        [-1, '-1'],
        [Number.NaN, 'NaN'],
        ['5', '"5"'],
        [null, 'null'],
      ] as const) {
        const e = thrown(value);
        expect(e).toMatchObject({ code: 'INVALID_CONFIG', details: { option: 'outcomeRetentionMs', value: shown } });
        expect((e as Error).message).toContain(`outcomeRetentionMs=${shown}`);
      }
      const forever = w.start(verdicts, { outcomeRetentionMs: Infinity });
      await forever.submit({ runId: 'ok-kept' });
      await forever.result('ok-kept');
      expect(await forever.sweepFinishedRunsNow()).toBe(0);
      expect((await forever.result('ok-kept')).status).toBe('succeeded');
    });

    it('keeps a kept outcome small: the record and its index entry, in bytes', async () => {
      const w = await world(factory);
      const runtime = w.start(async () => StepOutcome.succeed(b('0123456789')));
      const { runId } = await runtime.submit({});
      await runtime.result(runId);
      let bytes = 0;
      for (const prefix of ['workflow/outcomes/', 'workflow/ended/']) {
        const page = await w.queue.kvScan(b(prefix));
        for (const [k, v] of page.entries) bytes += k.length + v.length;
      }
      // 26-character run id, default queue name, a 10-byte result, no headers.
      expect(bytes).toBeLessThanOrEqual(170);
    });

    describe("runIdReuse 'after-retention': an id is one run while its outcome is kept", () => {
      const KEEP: WorkflowRuntimeOptions = { runIdReuse: 'after-retention', outcomeRetentionMs: 10_000 };
      let calls = 0;
      const counted: StepRunner = async (step) => {
        calls++;
        return verdicts(step);
      };
      const idle = (w: World): WorkflowRuntime => new WorkflowRuntime(w.queue, w.store, counted, new NoopTerminalHook(), { logger: silentLogger, ...KEEP });

      it('a resubmission answers with the finished run, runs nothing, and refuses another input; after the sweep the id is free', async () => {
        const w = await world(factory);
        calls = 0;
        const runtime = w.start(counted, KEEP);
        const first = await runtime.submit({ runId: 'ok-once', input: b('in') });
        await runtime.result('ok-once');
        expect(await runtime.submit({ runId: 'ok-once', input: b('in') })).toEqual({ runId: 'ok-once', newlySubmitted: false, jobId: first.jobId, finished: 'succeeded' });
        const mismatch = await runtime.submit({ runId: 'ok-once', input: b('other') }).catch((e: unknown) => e);
        expect(mismatch).toMatchObject({ code: 'INPUT_MISMATCH', details: { runId: 'ok-once' } });
        expect(calls).toBe(1);
        expect(s((await runtime.result('ok-once')).result!)).toBe('done:in');

        // Another process answers alike from the record.
        await w.reopen();
        const again = w.start(counted, KEEP);
        expect((await again.submit({ runId: 'ok-once', input: b('in') })).finished).toBe('succeeded');
        expect(calls).toBe(1);

        await w.clock.advance(10_001);
        expect(await again.sweepFinishedRunsNow()).toBe(1);
        expect(await again.submit({ runId: 'ok-once', input: b('other') })).toMatchObject({ newlySubmitted: true });
        expect(s((await again.result('ok-once')).result!)).toBe('done:other');
        expect(calls).toBe(2);
      });

      it('keeps the input hash of a run another process submitted (read at the claim) and of a waiting run cancelled from its records', async () => {
        const w = await world(factory);
        calls = 0;
        await idle(w).submit({ runId: 'ok-elsewhere', input: b('a') });
        await idle(w).submit({ runId: 'park-elsewhere', input: b('p') });
        await w.reopen();
        const worker = w.start(counted, KEEP);
        await worker.result('ok-elsewhere');
        await eventually(async () => (await worker.getRun('park-elsewhere'))?.state === 'waiting-for-signal');
        await w.reopen();
        const canceller = idle(w);
        expect(await canceller.cancel('park-elsewhere')).toBe(true);
        for (const [runId, input, status] of [['ok-elsewhere', 'a', 'succeeded'], ['park-elsewhere', 'p', 'cancelled']] as const) {
          expect(await canceller.submit({ runId, input: b('changed') }).catch((e: unknown) => e)).toMatchObject({ code: 'INPUT_MISMATCH' });
          expect((await canceller.submit({ runId, input: b(input) })).finished).toBe(status);
        }
        // The cancel path read the run record: its submission time is exact.
        expect((await canceller.result('park-elsewhere')).submittedAtMs).toBe(START);
      });

      it("the default ('after-finish') starts a new run under a finished id; bad values are INVALID_CONFIG naming the option", async () => {
        const w = await world(factory);
        const runtime = w.start(verdicts);
        await runtime.submit({ runId: 'ok-default' });
        await runtime.result('ok-default');
        const next = await runtime.submit({ runId: 'ok-default', input: b('x') });
        expect(next.newlySubmitted).toBe(true);
        expect(next.finished).toBeUndefined();
        for (const [options, rule] of [
          [{ runIdReuse: 'always' }, "must be 'after-finish' or 'after-retention'"],
          [{ runIdReuse: 'after-retention', outcomeRetentionMs: 0 }, 'needs outcomeRetentionMs above 0'],
        ] as const) {
          const e = (() => {
            try {
              new WorkflowRuntime(w.queue, w.store, verdicts, new NoopTerminalHook(), options as WorkflowRuntimeOptions);
            } catch (error) {
              return error;
            }
          })();
          expect(e).toMatchObject({ code: 'INVALID_CONFIG', details: { option: 'runIdReuse' } });
          expect((e as Error).message).toContain(rule);
        }
      });
    });
  });
}
