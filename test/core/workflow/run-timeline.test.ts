/**
 * `getRunTimeline` (runtime and `WorkflowReader`): a run's steps with their jobs and tries, the
 * signal each waited for and what arrived (woken, buffered before the wait, timed out), memo
 * entries, step outcomes with KV effects (step-output replay on), the terminal outcome (the
 * notification, else the finished-run record or the dead step), and what is missing when the
 * writer keeps less.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { Queue } from '../../../src/core/queue/index.js';
import { StepOutcome, WorkflowReader, WorkflowRuntime, type Step, type TerminalHook } from '../../../src/core/workflow/index.js';
import { b, eventually, s } from './harness.js';

const PATH = 'timeline';
const HOUR = 3_600_000;
const hook: TerminalHook = { onTermination: async () => undefined };

describe('getRunTimeline', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => undefined);
  });

  async function setup(options: { keepDone: boolean; replay: boolean; memoRetentionMs?: number; outcomeRetentionMs?: number }) {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, PATH, {
      logger: false,
      schedulerIntervalMs: 20,
      queueConfigs: { 'workflow-steps': { keepDoneMs: options.keepDone ? HOUR : null, maxAttempts: 2, retryBackoffBaseMs: 5, retryBackoffMaxMs: 5 } },
    });
    cleanup.push(() => queue.close());
    const runner = async (step: Step): Promise<StepOutcome> => {
      const kind = step.runId.split('-')[0];
      if (kind === 'broken') throw new Error(`boom ${step.attempt}`);
      if (kind === 'wait' || kind === 'early' || kind === 'late') {
        if (step.stepNumber === 0) {
          await step.memo.memoized('plan', () => 'plan');
          await step.runMemo.memoized('shared', () => 42);
          step.effects.put(`out/${step.runId}`, b('v'));
          step.effects.delete(`tmp/${step.runId}`);
          return StepOutcome.continueOnSignal(step.payload, `key-${step.runId}`, kind === 'late' ? 30 : HOUR);
        }
        return StepOutcome.succeed(step.signalPayload ?? b('none'));
      }
      return StepOutcome.fail('not a test run');
    };
    const runtime = new WorkflowRuntime(queue, store, runner, hook, { logger: false, pollIntervalMs: 20, stepOutputReplay: options.replay, memoRetentionMs: options.memoRetentionMs ?? null,
      ...(options.outcomeRetentionMs === undefined ? {} : { outcomeRetentionMs: options.outcomeRetentionMs }),
    });
    const worker = runtime.spawn();
    cleanup.push(() => worker.shutdown());
    const reader = await WorkflowReader.open(store, PATH, { pollIntervalMs: null, logger: false });
    cleanup.push(() => reader.close());
    return { runtime, reader, queue };
  }

  it('follows a signal run from its wait to its outcome, alike from the runtime and a reader', async () => {
    const { runtime, reader } = await setup({ keepDone: true, replay: true, memoRetentionMs: HOUR });
    await runtime.submit({ runId: 'wait-1', input: b('in'), headers: { owner: 'ann' } });
    await eventually(async () => (await runtime.getRun('wait-1'))?.state === 'waiting-for-signal');

    const waiting = await runtime.getRunTimeline('wait-1');
    await reader.refresh();
    expect(await reader.getRunTimeline('wait-1')).toEqual(waiting);
    expect(waiting).toMatchObject({ runId: 'wait-1', status: 'active', headers: { owner: 'ann' }, terminal: null, truncated: false });
    expect(waiting.active?.state).toBe('waiting-for-signal');
    const [step0, step1] = waiting.steps;
    expect(step0.jobs.map((j) => [j.status, j.attempts, j.history.map((h) => h.outcome)])).toEqual([['done', 1, ['completed']]]);
    expect(step0.outcome).toMatchObject({ type: 'continue', when: { type: 'onSignal', correlationKey: 'key-wait-1', timeoutMs: HOUR }, reason: null });
    expect(step0.outcome!.kvWrites.map((w) => [s(w.key), s(w.value)])).toEqual([['out/wait-1', 'v']]);
    expect(step0.outcome!.kvDeletes.map(s)).toEqual(['tmp/wait-1']);
    expect(step1.signal).toEqual({ correlationKey: 'key-wait-1', arrival: 'waiting', arrivedAtMs: null, payload: null });
    expect(waiting.memo.map((m) => m.scope).sort()).toEqual([0, 'run']);

    expect(await runtime.signal('key-wait-1', b('yes'))).toBe('delivered');
    await eventually(async () => (await runtime.getRunTimeline('wait-1')).terminal !== null);
    const done = await runtime.getRunTimeline('wait-1');
    expect(done).toMatchObject({ status: 'terminated', active: null, headers: { owner: 'ann' } });
    expect(done.terminal).toMatchObject({ status: 'succeeded', finalStep: 1, source: 'notification', error: null });
    expect(done.terminatedAtMs).toBe((await runtime.result('wait-1')).endedAtMs);
    expect(s(done.terminal!.result!)).toBe('yes');
    expect(done.terminatedAtMs).toEqual(expect.any(Number));
    expect(done.steps[1].signal).toMatchObject({ correlationKey: 'key-wait-1', arrival: 'woken' });
    expect(s(done.steps[1].signal!.payload!)).toBe('yes');
    expect(done.steps[1].outcome).toMatchObject({ type: 'succeed' });
  });

  it('tells a signal buffered before the wait from a timed-out wait', async () => {
    const { runtime } = await setup({ keepDone: true, replay: true });
    expect(await runtime.signal('key-early-1', b('ahead'))).toBe('buffered');
    await runtime.submit({ runId: 'early-1', input: b('in') });
    await runtime.submit({ runId: 'late-1', input: b('in') });
    await eventually(async () => (await runtime.getRunTimeline('early-1')).terminal !== null && (await runtime.getRunTimeline('late-1')).terminal !== null);
    const early = await runtime.getRunTimeline('early-1');
    // Consumed at registration; the delivered record is gone once the step was acknowledged.
    expect(early.steps[1].signal).toMatchObject({ correlationKey: 'key-early-1', arrival: 'buffered' });
    expect(s(early.terminal!.result!)).toBe('ahead');
    const late = await runtime.getRunTimeline('late-1');
    expect(late.steps[1].signal).toEqual({ correlationKey: 'key-late-1', arrival: 'timed-out', arrivedAtMs: null, payload: null });
    expect(s(late.terminal!.result!)).toBe('none');
  });

  it('reports a dead step as the outcome, and only what survives when done jobs, replay and finished-run records are not kept', async () => {
    const { runtime } = await setup({ keepDone: false, replay: false, outcomeRetentionMs: 0 });
    await runtime.submit({ runId: 'broken-1', input: b('in') });
    await runtime.submit({ runId: 'wait-2', input: b('in') });
    await eventually(async () => (await runtime.listDeadSteps()).length === 1 && (await runtime.getRun('wait-2'))?.state === 'waiting-for-signal');
    const broken = await runtime.getRunTimeline('broken-1');
    expect(broken.status).toBe('terminated');
    expect(broken.steps).toHaveLength(1);
    expect(broken.steps[0].jobs[0].history.map((h) => [h.outcome, h.error])).toEqual([
      ['retried', 'boom 1'],
      ['dead_lettered', 'boom 2'],
    ]);
    // A hook that observes every outcome leaves a notification job: its payload is preferred.
    expect(broken.terminal).toMatchObject({ status: 'failed', error: 'boom 2', finalStep: 0 });
    // No finished-run record with retention 0: the notification while it waits, else the dead step.
    expect(['notification', 'dead-step']).toContain(broken.terminal?.source);
    const wait = await runtime.getRunTimeline('wait-2');
    // Step 0's job was deleted at its ack and no replay record was written: only its memo entry remains.
    expect(wait.steps.map((st) => [st.step, st.jobs.length, st.outcome])).toEqual([
      [0, 0, null],
      [1, 1, null],
    ]);
    expect(wait.steps[1].signal).toMatchObject({ correlationKey: 'key-wait-2', arrival: 'waiting' });
    expect(await runtime.getRunTimeline('nobody')).toMatchObject({ status: 'unknown', steps: [], memo: [], terminal: null });
    await expect(runtime.getRunTimeline('bad id')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('says when a scan stopped at its limit', async () => {
    const { runtime } = await setup({ keepDone: true, replay: false });
    for (const id of ['wait-a', 'wait-b', 'wait-c']) await runtime.submit({ runId: id, input: b('in') });
    await eventually(async () => (await runtime.listRuns({ status: 'waiting-for-signal' })).runs.length === 3);
    expect((await runtime.getRunTimeline('wait-c', { scanLimit: 1 })).truncated).toBe(true);
    expect((await runtime.getRunTimeline('wait-c')).truncated).toBe(false);
  });
});
