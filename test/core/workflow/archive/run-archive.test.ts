/**
 * Run archives (docs/rfcs/0004-run-archive.md): a StepRunner run and a workflow function's run
 * exported mid-way from a memory store and imported into a filesystem store finish there with no
 * completed step repeated (counted through side effects); a hand-off leaves the source not running
 * the run and answering where it went; importing twice is importing once; a copy imports under a
 * new run id; a running step is not handed off.
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../../../src/core/bytes.js';
import { isTaqubaError } from '../../../../src/core/errors.js';
import { defineWorkflow, StepOutcome, type StepRunner } from '../../../../src/core/workflow/index.js';
import { describeRunArchive } from '../../../../src/core/workflow/archive/archive-format.js';
import { FaultyObjectStore } from '../../../../src/testing/faulty-store.js';
import { fsStore, memoryStore } from '../../../support/stores.js';
import { b, deferred, eventually, makeHarness, RecordingHook, s } from '../harness.js';
import { Counter, fnWorld, Gates, rejection, resultOf, sleeping, waitingForSignal } from '../functions/fn-harness.js';

const memory = memoryStore();
const fs = fsStore({ writerLock: false });

/** A four-step chain: step 0 memoizes, step 1 sleeps a minute, step 2 reads the memo and a caller-KV key, step 3 ends. */
function chain(calls: Counter, gate?: Promise<void>): StepRunner {
  return async (step) => {
    calls.hit(`step${step.stepNumber}`);
    switch (step.stepNumber) {
      case 0:
        await step.runMemo.put('seed', b('s0'));
        return StepOutcome.continueNow(b('one'));
      case 1:
        return StepOutcome.continueAfter(b('two'), 60_000);
      case 2: {
        await gate;
        const seed = await step.runMemo.get('seed');
        const x = await step.kv.get('app/x');
        return StepOutcome.continueNow(b(`${s(seed ?? b('?'))}+${s(x ?? b('?'))}`));
      }
      default:
        return StepOutcome.succeed(step.payload);
    }
  };
}

describe('run archives: a StepRunner run', () => {
  it('moves mid-chain from a memory store to a filesystem store and finishes there with no step repeated', async () => {
    const source = await makeHarness(memory.factory);
    const target = await makeHarness(fs.factory);
    const calls = new Counter();
    const { runtime: from } = source.start(chain(calls), new RecordingHook());
    await source.queue.kvPut(utf8('app/x'), b('x1'));
    await from.submit({ runId: 'r1', input: b('in'), headers: { team: 't' } });
    await eventually(async () => (await from.getRun('r1'))?.state === 'scheduled', 10_000, 'r1 to sleep at step 2');

    const archive = await from.exportRun('r1', { handOff: true, to: 'fs-backend', kvKeys: ['app/x', 'app/absent'] });
    expect(await describeRunArchive(archive)).toMatchObject({ runId: 'r1', step: 2, handOff: true, to: 'fs-backend', kind: 'steps', state: 'scheduled', kvEntries: 1 });

    // The source no longer runs it, and says where it went.
    expect(from.status('r1')).toBeNull();
    expect(await from.getRun('r1')).toBeNull();
    expect(await from.readStatus('r1', { includeFinished: true })).toEqual({ runId: 'r1', state: 'moved', currentStep: 2, movedTo: 'fs-backend' });
    const moved = await rejection(from.result('r1'));
    expect([moved.code, (moved.details as Record<string, unknown>).reason, (moved.details as Record<string, unknown>).movedTo]).toEqual(['NOT_FOUND', 'run_moved', 'fs-backend']);
    await source.advance(120_000);
    expect(await source.queue.stats('workflow-steps')).toMatchObject({ pending: 0, scheduled: 0, claimed: 0 });
    // Asked again (a lost answer): the same archive.
    expect(await from.exportRun('r1', { handOff: true })).toEqual(archive);

    const hook = new RecordingHook();
    const { runtime: to } = target.start(chain(calls), hook);
    const imported = await to.importRun(archive);
    expect(imported).toMatchObject({ runId: 'r1', step: 2, newlyImported: true });
    expect(await to.importRun(archive)).toEqual({ ...imported, newlyImported: false });
    expect(await to.getRun('r1')).toMatchObject({ state: 'scheduled', currentStep: 2, headers: { team: 't' } });
    await target.advance(60_000);
    const outcome = await hook.first();
    expect(outcome).toMatchObject({ runId: 'r1', status: 'succeeded', finalStep: 3, headers: { team: 't' } });
    // The run memo and the named KV key came along.
    expect(s(outcome.result!)).toBe('s0+x1');
    expect(calls.all()).toEqual({ step0: 1, step1: 1, step2: 1, step3: 1 });
    expect(hook.outcomes).toHaveLength(1);
  });

  it('a run handed off gives its concurrency slot to the next waiting run of its key at the source', async () => {
    const source = await makeHarness(memory.factory);
    const calls = new Counter();
    const { runtime: from } = source.start(chain(calls), new RecordingHook());
    const slot = { key: 'user-1', limit: 1 };
    await from.submit({ runId: 'h1', input: b('in'), concurrency: slot });
    await from.submit({ runId: 'h2', input: b('in'), concurrency: slot });
    await eventually(async () => (await from.getRun('h1'))?.state === 'scheduled', 10_000, 'h1 to sleep at step 2');
    expect(await from.getRun('h2')).toMatchObject({ state: 'waiting-for-slot' });
    await from.exportRun('h1', { handOff: true });
    // Admitted in the hand-off's own transaction: it runs its first steps and sleeps in turn.
    await eventually(async () => (await from.getRun('h2'))?.state === 'scheduled', 10_000, 'h2 to be admitted and sleep at step 2');
    expect(calls.get('step0')).toBe(2);
  });

  it('refuses to hand off a running step, and the run goes on at its source', async () => {
    const source = await makeHarness(memory.factory);
    const calls = new Counter();
    const gate = deferred();
    const { runtime } = source.start(chain(calls, gate.promise), new RecordingHook());
    await runtime.submit({ runId: 'busy', input: b('in') });
    await eventually(async () => (await runtime.getRun('busy'))?.state === 'scheduled', 10_000, 'busy to sleep');
    await source.advance(60_000);
    await eventually(async () => (await runtime.getRun('busy'))?.state === 'running', 10_000, 'step 2 to run');
    const refused = await rejection(runtime.exportRun('busy', { handOff: true }));
    expect([refused.code, (refused.details as Record<string, unknown>).reason]).toEqual(['CONFLICT', 'step_running']);
    // A copy of a running step is allowed (it is copied as waiting).
    const copy = await describeRunArchive(await runtime.exportRun('busy'));
    expect(copy).toMatchObject({ handOff: false, step: 2, state: 'pending' });
    gate.resolve();
    expect((await runtime.result('busy')).status).toBe('succeeded');
  });

  it('imports a copy under a new run id (or the one asked for), once per archive', async () => {
    const source = await makeHarness(memory.factory);
    const target = await makeHarness(fs.factory);
    const calls = new Counter();
    const { runtime: from } = source.start(chain(calls), new RecordingHook());
    await from.submit({ runId: 'orig', input: b('in') });
    await eventually(async () => (await from.getRun('orig'))?.state === 'scheduled', 10_000, 'orig to sleep');
    const copy = await from.exportRun('orig');
    // A copy changes nothing at the source.
    expect(await from.getRun('orig')).toMatchObject({ state: 'scheduled', currentStep: 2 });

    const to = target.runtime(chain(calls), new RecordingHook());
    const first = await to.importRun(copy);
    expect(first.runId).not.toBe('orig');
    expect(first.newlyImported).toBe(true);
    expect(await to.importRun(copy)).toMatchObject({ runId: first.runId, newlyImported: false });
    const other = await rejection(to.importRun(copy, { runId: 'named' }));
    expect([other.code, (other.details as Record<string, unknown>).reason]).toEqual(['CONFLICT', 'archive_imported']);
    // Another export of the same run is another archive: asked for under a taken id, refused.
    const second = await from.exportRun('orig');
    const taken = await rejection(to.importRun(second, { runId: first.runId }));
    expect([taken.code, (taken.details as Record<string, unknown>).reason]).toEqual(['ALREADY_EXISTS', 'run_exists']);
    expect(await to.importRun(second, { runId: 'named' })).toMatchObject({ runId: 'named', newlyImported: true });
  });

  it('carries a woken signal waiter: the imported step sees the signal', async () => {
    const source = await makeHarness(memory.factory);
    const target = await makeHarness(fs.factory);
    const seen: (string | null)[] = [];
    const runner: StepRunner = async (step) => {
      if (step.stepNumber === 0) return StepOutcome.continueOnSignal(b('wait'), 'approve:w1', 3_600_000);
      seen.push(step.signalPayload === null ? null : s(step.signalPayload));
      return StepOutcome.succeed(b('done'));
    };
    const { runtime: from, handle } = source.start(runner, new RecordingHook());
    await from.submit({ runId: 'w1' });
    await eventually(async () => (await from.getRun('w1'))?.state === 'waiting-for-signal', 10_000, 'w1 to wait');
    // Woken while no worker runs: the step is pending with its signal.
    await handle.shutdown();
    expect(await from.signal('approve:w1', b('yes'))).toBe('delivered');
    const archive = await from.exportRun('w1', { handOff: true });
    const hook = new RecordingHook();
    const { runtime: to } = target.start(runner, hook);
    await to.importRun(archive);
    expect((await hook.first()).status).toBe('succeeded');
    expect(seen).toEqual(['yes']);
  });

  it('imports a scheduled signal waiter that a signal in the target store wakes', async () => {
    const source = await makeHarness(memory.factory);
    const target = await makeHarness(fs.factory);
    const runner: StepRunner = async (step) => {
      if (step.stepNumber === 0) return StepOutcome.continueOnSignal(b('wait'), 'approve:w2', 3_600_000);
      return StepOutcome.succeed(step.signalPayload ?? b('timed out'));
    };
    const { runtime: from } = source.start(runner, new RecordingHook());
    await from.submit({ runId: 'w2' });
    await eventually(async () => (await from.getRun('w2'))?.state === 'waiting-for-signal', 10_000, 'w2 to wait');
    const archive = await from.exportRun('w2', { handOff: true });
    // The source's wait is gone with the run: a signal there is only buffered.
    expect(await from.signal('approve:w2', b('late'))).toBe('buffered');
    const hook = new RecordingHook();
    const { runtime: to } = target.start(runner, hook);
    await to.importRun(archive);
    expect(await to.getRun('w2')).toMatchObject({ state: 'waiting-for-signal', waitingFor: { type: 'signal', correlationKey: 'approve:w2' } });
    expect(await to.signal('approve:w2', b('ok'))).toBe('delivered');
    expect(s((await hook.first()).result!)).toBe('ok');
  });
});

/** A function that steps, sleeps, steps, waits for a signal and steps again; every step counts its calls. */
function errand(calls: Counter) {
  return defineWorkflow({
    name: 'errand',
    async run(ctx, who: string) {
      const a = await ctx.step('a', () => (calls.hit('a'), `hello ${who}`));
      await ctx.sleep(60_000);
      const bb = await ctx.step('b', () => (calls.hit('b'), `${a}!`));
      const answer = await ctx.waitForSignal<string>('go', { timeoutMs: 3_600_000 });
      const c = await ctx.step('c', () => (calls.hit('c'), `${bb} ${answer.timedOut ? 'late' : answer.value}`));
      return c;
    },
  });
}

describe('run archives: a workflow function run', () => {
  it('moves while sleeping, moves back while waiting for a signal, and finishes with no step repeated', async () => {
    const calls = new Counter();
    const wf = errand(calls);
    const home = await fnWorld(memory.factory);
    const away = await fnWorld(fs.factory);
    const local = home.start([wf], { outcomeRetentionMs: 3_600_000 });
    await local.start(wf, 'ann', { runId: 'e1' });
    await sleeping(local, 'e1');

    const there = await local.exportRun('e1', { handOff: true, to: 'server' });
    expect(await describeRunArchive(there)).toMatchObject({ kind: 'function', step: 1, state: 'scheduled' });
    expect(await local.readStatus('e1', { includeFinished: true })).toMatchObject({ state: 'moved', movedTo: 'server' });
    // The source's history of the run went with it.
    expect(await home.historyKeys()).toEqual([]);

    const remote = away.start([wf]);
    expect(await remote.importRun(there)).toMatchObject({ runId: 'e1', newlyImported: true });
    await away.advance(60_000);
    await waitingForSignal(remote, 'e1');

    // And back, waiting for its signal: importing into the source continues it there.
    const back = await remote.exportRun('e1', { handOff: true, to: 'laptop' });
    expect(await remote.readStatus('e1', { includeFinished: true })).toMatchObject({ state: 'moved', movedTo: 'laptop' });
    // Sleeps and timeouts are epoch times: the two stores' clocks agree, as machines' clocks do.
    await home.advance(60_000);
    await local.importRun(back);
    await waitingForSignal(local, 'e1');
    expect(await local.signal('e1', 'go', 'now')).toBe('delivered');
    expect(await resultOf(local.workflowRun(wf, 'e1'))).toBe('hello ann! now');
    expect(calls.all()).toEqual({ a: 1, b: 1, c: 1 });
    // Ended here after it came back: the finished record is newer than the moved one.
    expect(await local.readStatus('e1', { includeFinished: true })).toMatchObject({ state: 'succeeded' });
  });

  it('a copy waiting for a signal finishes under its new id with the steps it had done not run again', async () => {
    const calls = new Counter();
    const wf = errand(calls);
    const home = await fnWorld(memory.factory);
    const away = await fnWorld(fs.factory);
    const local = home.start([wf]);
    await local.start(wf, 'bo', { runId: 'e2' });
    await sleeping(local, 'e2');
    await home.advance(60_000);
    await waitingForSignal(local, 'e2');
    expect(calls.all()).toEqual({ a: 1, b: 1 });

    const copy = await local.exportRun('e2');
    await away.advance(60_000);
    const remote = away.start([wf]);
    const { runId } = await remote.importRun(copy, { runId: 'e2-copy' });
    expect(runId).toBe('e2-copy');
    await waitingForSignal(remote, 'e2-copy');
    // The copy waits on its own signal key; the original still waits at the source.
    expect(await remote.signal('e2-copy', 'go', 'copied')).toBe('delivered');
    expect(await resultOf(remote.workflowRun(wf, 'e2-copy'))).toBe('hello bo! copied');
    expect(calls.all()).toEqual({ a: 1, b: 1, c: 1 });
    expect(await local.getRun('e2')).toMatchObject({ state: 'waiting-for-signal' });
  });

  it('a run imported at step 0 replays the history it came with', async () => {
    const calls = new Counter();
    const gates = new Gates();
    const wf = defineWorkflow({
      name: 'midway',
      async run(ctx) {
        await ctx.step('once', () => calls.hit('once'));
        await gates.hold('mid');
        return ctx.step('then', () => (calls.hit('then'), 'ok'));
      },
    });
    const home = await fnWorld(memory.factory);
    const away = await fnWorld(fs.factory);
    gates.arm('mid');
    await home.start([wf]).start(wf, undefined, { runId: 'f1' });
    await gates.reached('mid');
    // The process dies inside step 0, after a step was recorded: the next one finds it pending.
    await home.restart();
    const local = home.runtime([wf]);
    expect(await local.getRun('f1')).toMatchObject({ state: 'pending', currentStep: 0, interruptions: 1 });
    const archive = await local.exportRun('f1', { handOff: true });
    const remote = away.start([wf]);
    await remote.importRun(archive);
    expect(await resultOf(remote.workflowRun(wf, 'f1'))).toBe('ok');
    expect(calls.all()).toEqual({ once: 1, then: 1 });
  });

  it('a runtime of workflow functions refuses a StepRunner run', async () => {
    const source = await makeHarness(memory.factory);
    const { runtime } = source.start(chain(new Counter()), new RecordingHook());
    await runtime.submit({ runId: 'plain' });
    await eventually(async () => (await runtime.getRun('plain'))?.state === 'scheduled', 10_000, 'plain to sleep');
    const away = await fnWorld(fs.factory);
    const e = await rejection(away.runtime([errand(new Counter())]).importRun(await runtime.exportRun('plain')));
    expect(isTaqubaError(e, 'INVALID_ARGUMENT') && e.details.reason).toBe('archive_kind');
  });
});

describe('run archives: a hand-off interrupted', () => {
  it('leaves the run at its source when the archive cannot be kept or the move does not commit', async () => {
    let faulty: FaultyObjectStore | undefined;
    const source = await makeHarness(async () => (faulty = new FaultyObjectStore(await memory.factory())));
    const calls = new Counter();
    const { runtime } = source.start(chain(calls), new RecordingHook());
    await runtime.submit({ runId: 'h1', input: b('in') });
    await eventually(async () => (await runtime.getRun('h1'))?.state === 'scheduled', 10_000, 'h1 to sleep');

    // The archive cannot be kept: nothing moved.
    const keep = faulty!.addRule({ type: 'fail', ops: ['put'], keyPrefix: 'workflow-memo/memos/h1/handoff/' });
    expect((await rejection(runtime.exportRun('h1', { handOff: true }))).code).toBe('STORE_UNAVAILABLE');
    keep.remove();
    expect(await runtime.getRun('h1')).toMatchObject({ state: 'scheduled', currentStep: 2 });
    expect(await runtime.readStatus('h1', { includeFinished: true })).toMatchObject({ state: 'pending' });

    // The move's commit fails (the engine's next write): nothing moved either; a new process still runs it.
    const commit = faulty!.addRule({ type: 'fail', ops: ['put'], keyPrefix: `${source.queue.path}/` });
    const failed = await rejection(runtime.exportRun('h1', { handOff: true }));
    expect(['STORE_UNAVAILABLE', 'CLOSED']).toContain(failed.code);
    expect(commit.fired).toBeGreaterThan(0);
    commit.remove();
    await source.crashRestart();
    const again = source.runtime(chain(calls), new RecordingHook());
    expect(await again.getRun('h1')).toMatchObject({ state: 'scheduled', currentStep: 2 });
    const archive = await again.exportRun('h1', { handOff: true });
    expect(await again.readStatus('h1', { includeFinished: true })).toMatchObject({ state: 'moved' });

    const target = await makeHarness(fs.factory);
    const hook = new RecordingHook();
    const { runtime: to } = target.start(chain(calls), hook);
    await to.importRun(archive);
    await target.advance(60_000);
    expect((await hook.first()).status).toBe('succeeded');
    expect(calls.all()).toEqual({ step0: 1, step1: 1, step2: 1, step3: 1 });
  });
});
