/**
 * Commands applied once (issue 25 part 1): `submit`, `signal` and `cancel` with a command id
 * answer a second application from the record kept with the first one's effect, also after the
 * run ended, after a restart, and for a refusal that depended on the state at the time.
 */
import { describe, expect, it } from 'vitest';
import { isTaqubaError } from '../../../src/core/errors.js';
import { sweepCommandAnswers } from '../../../src/core/workflow/commands/ledger.js';
import { StepOutcome, type Step } from '../../../src/core/workflow/index.js';
import { memoryStore } from '../../support/stores.js';
import { b, eventually, kvKeys, makeHarness, RecordingHook, s } from './harness.js';

const memory = memoryStore();
const HOUR = 3_600_000;

/** Step 0 succeeds with its input, counting calls. */
function echo(calls: { n: number }) {
  return async (step: Step) => {
    calls.n++;
    return StepOutcome.succeed(step.payload);
  };
}

describe('commands applied once', () => {
  it('a submission applied again after its run ended answers from the record: one run, one hook call', async () => {
    const h = await makeHarness(memory.factory);
    const hook = new RecordingHook();
    const calls = { n: 0 };
    const { runtime } = h.start(echo(calls), hook);
    const first = await runtime.submit({ runId: 'r1', input: b('x') }, { commandId: 'cmd-1' });
    expect(first.newlySubmitted).toBe(true);
    await hook.waitFor(1);
    // The run has ended, so its id is free: a plain submission would start a second run.
    const again = await runtime.submit({ runId: 'r1', input: b('x') }, { commandId: 'cmd-1' });
    expect(again).toEqual(first);
    await h.stopRuntimes();
    expect(calls.n).toBe(1);
    expect(hook.outcomes.length).toBe(1);
    // Another command id is another submission (the reference's rule: a new run).
    const fresh = await h.runtime(echo(calls), hook).submit({ runId: 'r1', input: b('x') }, { commandId: 'cmd-2' });
    expect(fresh.newlySubmitted).toBe(true);
    expect(fresh.jobId).not.toBe(first.jobId);
  });

  it('the answer survives a restart (it is durable with the effect)', async () => {
    const h = await makeHarness(memory.factory);
    const hook = new RecordingHook();
    const rt = h.runtime(echo({ n: 0 }), hook);
    const first = await rt.submit({ runId: 'r2', input: b('y') }, { commandId: 'cmd-restart' });
    await h.restart();
    const again = await h.runtime(echo({ n: 0 }), hook).submit({ runId: 'r2', input: b('y') }, { commandId: 'cmd-restart' });
    expect(again).toEqual(first);
    expect(await kvKeys(h.queue, 'workflow/commands/')).toEqual(['workflow/commands/cmd-restart']);
  });

  it('a duplicate submission keeps its answer too: applied again after the run ended, still no new run', async () => {
    const h = await makeHarness(memory.factory);
    const hook = new RecordingHook();
    const calls = { n: 0 };
    const { runtime } = h.start(
      async (step: Step) => {
        calls.n++;
        return step.stepNumber === 0 ? StepOutcome.continueOnSignal(step.payload, 'go', HOUR) : StepOutcome.succeed(step.payload);
      },
      hook,
    );
    await runtime.submit({ runId: 'r3', input: b('z') });
    const dup = await runtime.submit({ runId: 'r3', input: b('z') }, { commandId: 'cmd-dup' });
    expect(dup.newlySubmitted).toBe(false);
    await runtime.signal('go', b('now'));
    await hook.waitFor(1);
    expect(await runtime.submit({ runId: 'r3', input: b('z') }, { commandId: 'cmd-dup' })).toEqual(dup);
    await h.stopRuntimes();
    expect(hook.outcomes.length).toBe(1);
  });

  it('INPUT_MISMATCH is kept: the same command refused again after the conflicting run ended', async () => {
    const h = await makeHarness(memory.factory);
    const hook = new RecordingHook();
    const { runtime } = h.start(
      async (step: Step) => (step.stepNumber === 0 ? StepOutcome.continueOnSignal(step.payload, 'open', HOUR) : StepOutcome.succeed(step.payload)),
      hook,
    );
    await runtime.submit({ runId: 'r4', input: b('a') });
    const refused = await runtime.submit({ runId: 'r4', input: b('b') }, { commandId: 'cmd-mismatch' }).catch((e: unknown) => e);
    expect(isTaqubaError(refused, 'INPUT_MISMATCH')).toBe(true);
    await runtime.signal('open', b(''));
    await hook.waitFor(1);
    const again = await runtime.submit({ runId: 'r4', input: b('b') }, { commandId: 'cmd-mismatch' }).catch((e: unknown) => e);
    expect(isTaqubaError(again, 'INPUT_MISMATCH')).toBe(true);
    await h.stopRuntimes();
    expect(hook.outcomes.length).toBe(1);
  });

  it('a signal applied again neither wakes twice nor buffers a copy for the next waiter', async () => {
    const h = await makeHarness(memory.factory);
    const hook = new RecordingHook();
    const seen: string[] = [];
    const { runtime } = h.start(async (step: Step) => {
      if (step.stepNumber === 0) return StepOutcome.continueOnSignal(step.payload, `approve:${s(step.payload)}`, HOUR);
      seen.push(s(step.signalPayload ?? b('none')));
      return StepOutcome.succeed(step.payload);
    }, hook);
    await runtime.submit({ runId: 'r5', input: b('k') });
    const outcome = await runtime.signal('approve:k', b('yes'), { commandId: 'sig-1' });
    // The waiter may not be registered yet: then the first application buffered it, which is also its answer.
    expect(['delivered', 'buffered']).toContain(outcome);
    await hook.waitFor(1);
    const again = await runtime.signal('approve:k', b('yes'), { commandId: 'sig-1' });
    expect(again).toBe(outcome);
    expect(await kvKeys(h.queue, 'workflow/signal-buf/')).toEqual([]);
    await h.stopRuntimes();
    expect(seen).toEqual(['yes']);
  });

  it('a cancel applied again answers true, not false, after the run ended', async () => {
    const h = await makeHarness(memory.factory);
    const hook = new RecordingHook();
    const { runtime } = h.start(async (step: Step) => StepOutcome.continueOnSignal(step.payload, 'never', HOUR), hook);
    await runtime.submit({ runId: 'r6', input: b('c') });
    expect(await runtime.cancel('r6', { commandId: 'cancel-1' })).toBe(true);
    await hook.waitFor(1);
    expect(await runtime.cancel('r6')).toBe(false);
    expect(await runtime.cancel('r6', { commandId: 'cancel-1' })).toBe(true);
  });

  it('refuses a malformed command id or options with INVALID_ARGUMENT, before any change', async () => {
    const h = await makeHarness(memory.factory);
    const rt = h.runtime(echo({ n: 0 }), new RecordingHook());
    for (const commandId of ['', 'has space', 'x'.repeat(129), 42, null]) {
      const e = await rt.submit({ runId: 'r7' }, { commandId } as never).catch((err: unknown) => err);
      expect(isTaqubaError(e, 'INVALID_ARGUMENT'), String(commandId)).toBe(true);
      expect((e as Error).message).toContain('command id');
    }
    const e = await rt.cancel('r7', 'cmd' as never).catch((err: unknown) => err);
    expect(isTaqubaError(e, 'INVALID_ARGUMENT')).toBe(true);
    expect(await kvKeys(h.queue, 'workflow/runs/')).toEqual([]);
  });

  it('answers older than the retention window are swept, newer ones kept', async () => {
    const h = await makeHarness(memory.factory);
    const rt = h.runtime(echo({ n: 0 }), new RecordingHook());
    await rt.submit({ runId: 'old' }, { commandId: 'c-old' });
    await h.advance(10_000);
    const cutoff = h.clock.now();
    await rt.submit({ runId: 'new' }, { commandId: 'c-new' });
    expect(await sweepCommandAnswers(h.queue, cutoff)).toBe(1);
    expect(await kvKeys(h.queue, 'workflow/commands/')).toEqual(['workflow/commands/c-new']);
    expect((await kvKeys(h.queue, 'workflow/command-times/')).length).toBe(1);
  });

  it("the running runtime sweeps answers older than commandRetentionMs; bad values are INVALID_CONFIG", async () => {
    const h = await makeHarness(memory.factory);
    const rt = h.runtime(echo({ n: 0 }), new RecordingHook());
    await rt.submit({ runId: 'kept-a' }, { commandId: 'sweep-a' });
    await h.advance(60_000);
    await rt.submit({ runId: 'kept-b' }, { commandId: 'sweep-b' });
    expect(await kvKeys(h.queue, 'workflow/commands/')).toHaveLength(2);
    // A runtime on the same handle with a 30 s window sweeps the older answer when it starts.
    const { handle } = h.start(echo({ n: 0 }), new RecordingHook(), { commandRetentionMs: 30_000, queueName: 'sweeper', commandPollMs: null });
    await eventually(async () => (await kvKeys(h.queue, 'workflow/commands/')).length < 2, 5000, 'the start-up sweep of the older answer');
    expect(await kvKeys(h.queue, 'workflow/commands/')).toEqual(['workflow/commands/sweep-b']);
    await handle.shutdown();
    for (const commandRetentionMs of [0, -1, Number.NaN, '1d']) {
      expect(() => h.runtime(echo({ n: 0 }), new RecordingHook(), { commandRetentionMs } as never), String(commandRetentionMs)).toThrow(/commandRetentionMs/);
    }
    expect(() => h.runtime(echo({ n: 0 }), new RecordingHook(), { commandRetentionMs: Number.POSITIVE_INFINITY })).not.toThrow();
  });
});
