/**
 * The leader's `LocalOperations` in Node (no worker needed): the dead-step view it builds from the
 * runtime queue's dead jobs.
 */
import { describe, expect, it } from 'vitest';
import { LocalOperations } from '../../src/core/operations/local-operations.js';
import { MockClock } from '../../src/core/clock.js';
import { MemoryObjectStore } from '../../src/core/objects/memory-store.js';
import { Queue } from '../../src/core/queue/index.js';
import { HEADER_RUN_ID, HEADER_STEP, NoopTerminalHook, StepError, StepOutcome, WorkflowRuntime } from '../../src/core/workflow/index.js';
import { waitFor } from '../support/wait.js';

const quiet = { warn: () => undefined };

describe('LocalOperations.listDeadSteps', () => {
  // One dead step whose payload object was damaged made the whole list reject (CORRUPT_DATA),
  // so the browser's dead-letter panel could not show the broken step.
  it('lists every dead step, flagging the one whose payload object is corrupt, as plain data', async () => {
    const store = new MemoryObjectStore();
    const path = 'local-ops';
    const queue = await Queue.open(store, path, { clock: new MockClock(1_700_000_000_000), reaperIntervalMs: 1e12, schedulerIntervalMs: 1e12, logger: quiet, payloadOffloadThreshold: 16 });
    const runtime = new WorkflowRuntime(queue, store, async () => StepOutcome.succeed(new Uint8Array(0)), new NoopTerminalHook(), { logger: quiet });
    const ops = new LocalOperations(runtime, queue);
    const q = runtime.queueName;
    const bad = await queue.enqueue(q, new Uint8Array(100).fill(1), { headers: { [HEADER_RUN_ID]: 'run-bad', [HEADER_STEP]: '2' } });
    const good = await queue.enqueue(q, new Uint8Array(100).fill(2), { headers: { [HEADER_RUN_ID]: 'run-good', [HEADER_STEP]: '0' } });
    for (let i = 0; i < 2; i++) await queue.deadLetter((await queue.claim(q, 1000))!, 'step failed');
    const object = `${path}-payloads/${(await queue.getJob(bad))!.payloadRef}`;
    const sealed = (await store.get(object))!.data.slice();
    sealed[sealed.length - 1] ^= 0xff;
    await store.put(object, sealed);

    const dead = await ops.listDeadSteps();
    expect(dead).toEqual([
      {
        jobId: bad,
        runId: 'run-bad',
        stepNumber: 2,
        notification: false,
        attempts: 1,
        maxAttempts: expect.any(Number),
        interruptions: 0,
        lastError: 'step failed',
        failedAt: expect.any(Number),
        payloadError: { code: 'CORRUPT_DATA', object, message: `payload object corrupt. object=${object} problem=checksum mismatch` },
      },
      expect.objectContaining({ jobId: good, runId: 'run-good', stepNumber: 0, payloadError: null }),
    ]);
    // Crosses the worker boundary: structured-cloneable.
    expect(structuredClone(dead)).toEqual(dead);
    await queue.close();
  });
});

describe('LocalOperations inspector queries', () => {
  const setup = async () => {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'inspect', { clock: new MockClock(1_700_000_000_000), reaperIntervalMs: 1e12, schedulerIntervalMs: 1e12, logger: quiet });
    const runtime = new WorkflowRuntime(queue, store, async () => StepOutcome.succeed(new Uint8Array(0)), new NoopTerminalHook(), { logger: quiet });
    return { store, queue, runtime, ops: new LocalOperations(runtime, queue) };
  };

  it('reports runs with their state, filtered by status, and one run in detail', async () => {
    const { queue, ops } = await setup();
    await ops.submit({ runId: 'run-a', input: new Uint8Array([1]) });
    const page = await ops.listRuns({ status: 'pending' });
    expect(page.runs).toEqual([expect.objectContaining({ runId: 'run-a', state: 'pending', currentStep: 0 })]);
    expect((await ops.listRuns({ status: 'running' })).runs).toEqual([]);
    await expect(ops.listRuns({ status: 'sleeping' as never })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const run = await ops.getRun('run-a');
    expect(run).toMatchObject({ runId: 'run-a', state: 'pending', currentStep: 0, attempts: 0, waitingFor: null });
    expect(structuredClone(run)).toEqual(run);
    expect(await ops.getRun('run-none')).toBeNull();
    // The run's timeline crosses the worker boundary as plain data too; a bad id is refused.
    const timeline = await ops.runTimeline('run-a');
    expect(timeline).toMatchObject({ runId: 'run-a', status: 'active', active: { runId: 'run-a', currentStep: 0 } });
    expect(structuredClone(timeline)).toEqual(timeline);
    expect((await ops.runTimeline('run-none')).status).toBe('unknown');
    await expect(ops.runTimeline('has space')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_run_id' } });
    await queue.close();
  });

  it('lists a run memo by scope, naming the keys it is told, and reads a buffered signal', async () => {
    const { queue, runtime, ops } = await setup();
    await runtime.memoStore.newMemo('run-m', 2).put('model-call', new Uint8Array([7]));
    await runtime.memoStore.newRunMemo('run-m').put('other', new Uint8Array([8]));
    await runtime.memoStore.newMemo('run-m', 0).put('model-call', new Uint8Array([9]));
    const memo = await ops.listMemo('run-m', ['model-call']);
    expect(memo.map((e) => [e.scope, e.key, [...(e.value ?? [])]])).toEqual([
      [0, 'model-call', [9]],
      [2, 'model-call', [7]],
      ['run', null, [8]],
    ]);
    await expect(ops.listMemo('run-m', 'model-call' as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });

    expect(await ops.bufferedSignal('approval:run-m')).toBeNull();
    expect(await ops.signal('approval:run-m', new Uint8Array([5]))).toBe('buffered');
    expect(await ops.bufferedSignal('approval:run-m')).toEqual(new Uint8Array([5]));
    await expect(ops.bufferedSignal('')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await queue.close();
  });

  it('counts every queue, and retries or discards only dead steps of its own runtime', async () => {
    const { queue, runtime, ops } = await setup();
    const q = runtime.queueName;
    const dead = await queue.enqueue(q, new Uint8Array([1]), { headers: { [HEADER_RUN_ID]: 'run-d', [HEADER_STEP]: '1' } });
    const other = await queue.enqueue('elsewhere', new Uint8Array([2]));
    await queue.deadLetter((await queue.claim(q, 1000))!, 'out of attempts');
    await queue.deadLetter((await queue.claim('elsewhere', 1000))!, 'failed');

    expect(await ops.queueCounts()).toEqual([
      expect.objectContaining({ queue: 'elsewhere', dead: 1, pending: 0 }),
      expect.objectContaining({ queue: q, dead: 1, pending: 0 }),
    ]);
    await expect(ops.retryDeadStep(other)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await ops.discardDeadStep(other)).toBe(false);
    await expect(ops.retryDeadStep('')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });

    await ops.retryDeadStep(dead);
    expect(await ops.listDeadSteps()).toEqual([]);
    expect((await queue.getJob(dead))?.status).toBe('pending');
    await expect(ops.retryDeadStep(dead)).rejects.toMatchObject({ code: 'NOT_FOUND' });

    await queue.deadLetter((await queue.claim(q, 1000))!, 'again');
    expect(await ops.discardDeadStep(dead)).toBe(true);
    expect(await ops.discardDeadStep(dead)).toBe(false);
    expect(await queue.getJob(dead)).toBeUndefined();
    await queue.close();
  });
});

describe('LocalOperations.retryDeadStep on a running runtime', () => {
  // The step died in the transaction that failed its run: the retry runs it again as a job of
  // that ended run, and its new outcome reaches the terminal hook again.
  it('runs the dead step again; its second outcome reaches the terminal hook', async () => {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'retry-dead', { logger: quiet, schedulerIntervalMs: 20, reaperIntervalMs: 1e9 });
    let tries = 0;
    const outcomes: string[] = [];
    const runtime = new WorkflowRuntime(
      queue,
      store,
      async () => {
        tries++;
        if (tries === 1) throw StepError.permanent('poisoned');
        return StepOutcome.succeed(new Uint8Array([1]));
      },
      { onTermination: async (outcome) => void outcomes.push(`${outcome.runId}:${outcome.status}`) },
      { logger: quiet, pollIntervalMs: 20 },
    );
    const ops = new LocalOperations(runtime, queue);
    const handle = runtime.spawn();
    try {
      await ops.submit({ runId: 'run-r', input: new Uint8Array([0]) });
      await waitFor(async () => (await ops.listDeadSteps()).length === 1 && outcomes.length === 1, 'the dead step and the failed outcome');
      expect(outcomes).toEqual(['run-r:failed']);
      const [dead] = await ops.listDeadSteps();

      await ops.retryDeadStep(dead!.jobId);
      await waitFor(() => outcomes.length === 2, 'the second outcome, after the retry');
      expect(tries).toBe(2);
      expect(outcomes).toEqual(['run-r:failed', 'run-r:succeeded']);
      expect(await ops.listDeadSteps()).toEqual([]);
      // The ended run is not listed again.
      expect(await ops.getRun('run-r')).toBeNull();
    } finally {
      handle.shutdown();
      await handle.done;
      await queue.close();
    }
  });
});
