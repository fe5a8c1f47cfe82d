/**
 * Run queries (`listRuns`, `getRun`, `listDeadSteps`): from the writer's runtime, and from a
 * read-only `WorkflowReader` opened beside the live writer on the same store (what a dashboard or
 * CLI in another process does). Each store factory gives the writer's store and the reader's own
 * handle on the same data (for the filesystem: a second store on the same directory, the writer
 * holding its lock).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import { Queue, QueueReader } from '../../../src/core/queue/index.js';
import {
  createRunIdGenerator,
  HEADER_RUN_ID,
  HEADER_STEP,
  NoopTerminalHook,
  StepOutcome,
  WorkflowReader,
  WorkflowRuntime,
  type RunnerHandle,
  type RunSummary,
  type Step,
  type WorkflowReadSource,
} from '../../../src/core/workflow/index.js';
import { b, deferred, eventually, s, silentLogger } from './harness.js';

export interface StorePair {
  readonly writer: ObjectStore;
  readonly reader: ObjectStore;
}

const PATH = 'run-queries';
const HOUR = 3_600_000;

/** Pages through `listRuns` one run at a time, checking the cursor chain ends. */
async function allRuns(source: Pick<WorkflowRuntime, 'listRuns'>, status?: Parameters<WorkflowRuntime['listRuns']>[0]): Promise<RunSummary[]> {
  const out: RunSummary[] = [];
  let cursor: Uint8Array | undefined;
  for (let pages = 0; pages < 50; pages++) {
    const page = await source.listRuns({ ...status, limit: 1, cursor });
    out.push(...page.runs);
    cursor = page.nextCursor;
    if (cursor === undefined) return out;
  }
  throw new Error('the cursor chain did not end');
}

export function defineRunQueriesSuite(name: string, stores: () => Promise<StorePair>): void {
  describe(`run queries (${name})`, () => {
    const cleanup: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => undefined);
    });

    async function openWriter(pair: StorePair, runner: (step: Step) => Promise<StepOutcome>, maxConcurrentSteps = 1): Promise<{ queue: Queue; runtime: WorkflowRuntime }> {
      const queue = await Queue.open(pair.writer, PATH, { logger: silentLogger, defaultQueueConfig: { retryBackoffBaseMs: HOUR } });
      cleanup.push(() => queue.close());
      const runtime = new WorkflowRuntime(queue, pair.writer, runner, new NoopTerminalHook(), { logger: false, maxConcurrentSteps });
      return { queue, runtime };
    }

    async function openReader(pair: StorePair): Promise<WorkflowReader> {
      const reader = await WorkflowReader.open(pair.reader, PATH, { pollIntervalMs: null, logger: false });
      cleanup.push(() => reader.close());
      return reader;
    }

    it('lists, filters, pages and details active runs alike from the runtime and from a reader beside the writer', async () => {
      const pair = await stores();
      const release = deferred();
      const { runtime } = await openWriter(pair, async (step) => {
        const what = s(step.payload);
        if (what === 'delay') return StepOutcome.continueAfter(b('next'), HOUR);
        if (what === 'signal') return StepOutcome.continueOnSignal(b('next'), 'approval-1', HOUR);
        if (what === 'fail') throw new Error('flaky upstream');
        if (what === 'hold') await release.promise;
        return StepOutcome.succeed(step.payload);
      });
      // Opened before any run exists: it must not fence the writer, nor take its lock.
      const reader = await openReader(pair);
      const handle: RunnerHandle = runtime.spawn();
      cleanup.push(async () => {
        release.resolve();
        await handle.shutdown();
      });

      await runtime.submit({ runId: 'a-delay', input: b('delay'), headers: { team: 'ops' } });
      await runtime.submit({ runId: 'b-signal', input: b('signal') });
      await runtime.submit({ runId: 'c-retry', input: b('fail') });
      await eventually(async () => (await runtime.listRuns({ status: ['scheduled', 'waiting-for-signal'] })).runs.length === 3, 5000, 'three parked runs');
      await runtime.submit({ runId: 'd-hold', input: b('hold') });
      await eventually(async () => (await runtime.getRun('d-hold'))?.state === 'running', 5000, 'the held run running');
      // The only step slot is taken: this one stays claimable.
      await runtime.submit({ runId: 'e-pending', input: b('pending') });

      const expected = [
        { runId: 'a-delay', state: 'scheduled', currentStep: 1 },
        { runId: 'b-signal', state: 'waiting-for-signal', currentStep: 1 },
        { runId: 'c-retry', state: 'scheduled', currentStep: 0 },
        { runId: 'd-hold', state: 'running', currentStep: 0 },
        { runId: 'e-pending', state: 'pending', currentStep: 0 },
      ];
      const listed = await runtime.listRuns();
      expect(listed.runs).toMatchObject(expected);
      expect(listed.nextCursor).toBeUndefined();
      for (const run of listed.runs) {
        expect(run.submittedAtMs).toEqual(expect.any(Number));
        expect(run.jobId).toEqual(expect.any(String));
      }

      const details = await runtime.getRun('b-signal');
      expect(details).toMatchObject({ runId: 'b-signal', state: 'waiting-for-signal', currentStep: 1, attempts: 0, lastError: null, history: [] });
      expect(details?.waitingFor).toEqual({ type: 'signal', correlationKey: 'approval-1', timeoutAt: expect.any(Number) });
      expect((await runtime.getRun('a-delay'))?.waitingFor).toEqual({ type: 'timer', at: expect.any(Number), reason: 'delay' });
      expect((await runtime.getRun('a-delay'))?.headers).toEqual({ team: 'ops' });
      const retry = await runtime.getRun('c-retry');
      expect(retry).toMatchObject({ state: 'scheduled', currentStep: 0, attempts: 1, lastError: 'flaky upstream', waitingFor: { type: 'timer', reason: 'retry' } });
      expect(retry?.history).toMatchObject([{ attempt: 1, outcome: 'retried', error: 'flaky upstream' }]);
      expect(await runtime.getRun('d-hold')).toMatchObject({ state: 'running', attempts: 1, claimedAt: expect.any(Number), waitingFor: null });
      expect(await runtime.getRun('no-such-run')).toBeNull();

      // The reader's view is as of its open until it refreshes.
      expect((await reader.listRuns()).runs).toEqual([]);
      expect(await reader.getRun('b-signal')).toBeNull();
      // Claims commit non-durably (stored with the next durable commit), so refresh until caught up.
      const fromRuntime = await runtime.listRuns();
      await eventually(async () => {
        await reader.refresh();
        expect(await reader.listRuns()).toEqual(fromRuntime);
        return true;
      }, 5000, 'the reader caught up');
      for (const runId of ['a-delay', 'b-signal', 'c-retry', 'd-hold', 'e-pending']) expect(await reader.getRun(runId)).toEqual(await runtime.getRun(runId));

      // Filters and pages, the same from both.
      const sources: Pick<WorkflowRuntime, 'listRuns'>[] = [runtime, reader];
      for (const source of sources) {
        expect((await source.listRuns({ status: 'waiting-for-signal' })).runs.map((r) => r.runId)).toEqual(['b-signal']);
        expect((await source.listRuns({ status: ['running', 'pending'] })).runs.map((r) => r.runId)).toEqual(['d-hold', 'e-pending']);
        expect((await source.listRuns({ status: 'dead' })).runs).toEqual([]);
        expect((await allRuns(source)).map((r) => r.runId)).toEqual(expected.map((r) => r.runId));
        expect((await allRuns(source, { status: 'scheduled' })).map((r) => r.runId)).toEqual(['a-delay', 'c-retry']);
        expect((await source.listRuns({ limit: 0 })).runs).toEqual([]);
        await expect(source.listRuns({ limit: -1 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_limit' } });
        await expect(source.listRuns({ status: 'finished' as never })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_status' } });
      }
      await expect(reader.getRun('not a run id!')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_run_id' } });

      // A run that terminates leaves every listing once the reader refreshes.
      release.resolve();
      await eventually(async () => (await runtime.getRun('d-hold')) === null, 5000, 'the held run finished');
      await eventually(async () => {
        await reader.refresh();
        return (await reader.listRuns({ status: 'running' })).runs.length === 0 && (await reader.getRun('d-hold')) === null;
      }, 5000, 'the reader saw it finish');
    });

    it('a reader sees a run the writer submitted once it refreshes', async () => {
      const pair = await stores();
      const { runtime } = await openWriter(pair, async (step) => StepOutcome.succeed(step.payload));
      const reader = await openReader(pair);
      const nextRunId = createRunIdGenerator();
      const runId = nextRunId();
      expect(runId).toMatch(/^[0-9A-Z]{26}$/);
      expect(nextRunId() > runId).toBe(true);
      await runtime.submit({ runId, input: b('later') });

      expect(await reader.getRun(runId)).toBeNull();
      await reader.refresh();
      expect(await reader.getRun(runId)).toMatchObject({ runId, state: 'pending', currentStep: 0, attempts: 0, history: [] });
      expect((await reader.listRuns()).runs).toMatchObject([{ runId, state: 'pending', currentStep: 0 }]);
    });

    it('lists dead steps alike from both, a step dead-lettered outside the worker leaving its run dead until reconciled', async () => {
      const pair = await stores();
      const { queue, runtime } = await openWriter(pair, async (step) => StepOutcome.succeed(step.payload));
      const reader = await openReader(pair);
      const q = runtime.queueName;
      await runtime.submit({ runId: 'doomed', input: b('x') });
      const claim = await queue.claim(q, 60_000);
      await queue.deadLetter(claim!, 'operator gave up');
      const stray = await queue.enqueue(q, b('stray'), { headers: { [HEADER_RUN_ID]: 'gone', [HEADER_STEP]: '3' } });
      await queue.deadLetter((await queue.claim(q, 60_000))!, 'no run');

      const dead = await runtime.listDeadSteps();
      expect(dead).toEqual([
        {
          jobId: claim!.job.id,
          runId: 'doomed',
          stepNumber: 0,
          notification: false,
          attempts: 1,
          maxAttempts: expect.any(Number),
          interruptions: 0,
          lastError: 'operator gave up',
          failedAt: expect.any(Number),
          payloadError: null,
        },
        expect.objectContaining({ jobId: stray, runId: 'gone', stepNumber: 3 }),
      ]);
      expect(await runtime.listDeadSteps({ limit: 1 })).toEqual([dead[0]]);
      expect(await runtime.listDeadSteps({ afterJobId: dead[0]!.jobId })).toEqual([dead[1]]);
      await expect(runtime.listDeadSteps({ limit: 0 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_limit' } });
      await expect(runtime.listDeadSteps({ limit: 1001 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_limit' } });
      expect(await runtime.getRun('doomed')).toMatchObject({ state: 'dead', lastError: 'operator gave up', failedAt: expect.any(Number), waitingFor: null });
      expect((await runtime.listRuns({ status: 'dead' })).runs.map((r) => r.runId)).toEqual(['doomed']);

      await reader.refresh();
      expect(await reader.listDeadSteps()).toEqual(dead);
      expect(await reader.getRun('doomed')).toEqual(await runtime.getRun('doomed'));

      // Reconciliation fails the run: it leaves the run listings, its step stays dead.
      await runtime.reconcileNow();
      expect(await runtime.getRun('doomed')).toBeNull();
      await reader.refresh();
      expect((await reader.listRuns()).runs).toEqual([]);
      expect((await reader.listDeadSteps()).map((d) => d.jobId)).toContain(claim!.job.id);
    });

    it('a reader over a borrowed queue reader leaves it open; bad options are INVALID_CONFIG', async () => {
      const pair = await stores();
      const { queue, runtime } = await openWriter(pair, async (step) => StepOutcome.succeed(step.payload));
      await runtime.submit({ runId: 'r1', input: b('x') });
      const queueReader = await QueueReader.open(pair.reader, PATH, { pollIntervalMs: null, logger: false });
      cleanup.push(() => queueReader.close());
      const reader = new WorkflowReader(queueReader, { queueName: runtime.queueName });
      // Both the writer's queue and a queue reader fit the query source as they are.
      const sources: WorkflowReadSource[] = [queueReader, queue];
      expect(sources).toHaveLength(2);
      expect((await reader.listRuns()).runs.map((r) => r.runId)).toEqual(['r1']);
      await reader.close();
      expect(await queueReader.stats(runtime.queueName)).toMatchObject({ pending: 1 });

      expect(() => new WorkflowReader(queueReader, { queueName: '' })).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
      await expect(WorkflowReader.open(pair.reader, PATH, { queueName: 7 as never })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
      await expect(WorkflowReader.open(pair.reader, PATH, { pollIntervalMS: 5 } as never)).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    });
  });
}
