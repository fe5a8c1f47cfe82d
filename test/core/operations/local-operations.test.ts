/**
 * The core's operations: the one list (kinds, command arity, what may be sent again) against the
 * one implementation, and the finished-run reads carried through it (listing, one record,
 * `status` from the record, `runWait` awaiting the outcome in bounded chunks).
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { LocalOperations } from '../../../src/core/operations/local-operations.js';
import { applyOperation, COMMAND_NAMES, HOST_COMMAND_NAMES, isResendable, OPERATION_NAMES, OPERATIONS, type RuntimeCommands } from '../../../src/core/operations/operation-list.js';
import type { CommandRuntime } from '../../../src/core/workflow/commands/run-command.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { Queue } from '../../../src/core/queue/index.js';
import { utf8 } from '../../../src/core/bytes.js';
import { NoopTerminalHook, StepOutcome, WorkflowRuntime, type RunnerHandle, type Step } from '../../../src/core/workflow/index.js';

const quiet = { warn: () => undefined, info: () => undefined };

/** A runtime whose runs end by their input: `ok` succeeds with `done`, `bad` fails, `wait` parks on a signal. */
async function setup(options: { spawn?: boolean } = {}) {
  const store = new MemoryObjectStore();
  const queue = await Queue.open(store, 'ops', { logger: quiet });
  const runner = async (step: Step) => {
    const input = new TextDecoder().decode(step.payload);
    if (input === 'bad') return StepOutcome.fail('it went wrong');
    if (input === 'wait' && step.signalPayload === null) return StepOutcome.continueOnSignal(step.payload, `go:${step.runId}`, 3_600_000);
    return StepOutcome.succeed(utf8('done'));
  };
  const runtime = new WorkflowRuntime(queue, store, runner, new NoopTerminalHook(), { logger: quiet, pollIntervalMs: 5, commandPollMs: null });
  const handle: RunnerHandle | undefined = options.spawn === false ? undefined : runtime.spawn();
  const ops = new LocalOperations(runtime, queue);
  const close = async (): Promise<void> => {
    await handle?.shutdown();
    await queue.close();
  };
  return { runtime, queue, ops, close };
}

describe('the operation list', () => {
  it('names every operation LocalOperations serves, with its kind', async () => {
    const { ops, close } = await setup({ spawn: false });
    for (const name of OPERATION_NAMES) expect(typeof ops[name], name).toBe('function');
    expect(COMMAND_NAMES).toEqual(['submit', 'cancel', 'signal', 'addSchedule', 'replaceSchedule', 'removeSchedule', 'retryDeadStep']);
    // The schedule writes are the host's (carried by the runtime's inbox as extensions), not the runtime's.
    expect(HOST_COMMAND_NAMES).toEqual(['addSchedule', 'replaceSchedule', 'removeSchedule']);
    // What the runtime's command inbox applies takes each command's arguments and answers the same.
    expectTypeOf<CommandRuntime>().toExtend<RuntimeCommands>();
    // Only a job submission without a command id is unsafe to send again.
    expect(OPERATION_NAMES.filter((name) => !isResendable(name))).toEqual(['jobSubmit']);
    expect(OPERATIONS.signal).toEqual({ kind: 'command', arity: 2 });
    await close();
  });

  it('passes a command id after the operation own arguments: applied again, a command answers from its record', async () => {
    const { ops, runtime, close } = await setup({ spawn: false });
    const first = await applyOperation(ops, { method: 'signal', args: ['key-1', utf8('a')], commandId: 'cmd-1' });
    expect(first).toBe('buffered');
    // The same id again: answered from the ledger, the buffered payload not replaced.
    expect(await applyOperation(ops, { method: 'signal', args: ['key-1', utf8('b')], commandId: 'cmd-1' })).toBe('buffered');
    expect(await ops.bufferedSignal('key-1')).toEqual(utf8('a'));
    // Omitted trailing arguments still leave the command options in their place.
    const submitted = await applyOperation(ops, { method: 'submit', args: [{ runId: 'r-cmd', input: utf8('wait') }], commandId: 'cmd-2' });
    expect(submitted).toMatchObject({ runId: 'r-cmd', newlySubmitted: true });
    expect((await runtime.getRun('r-cmd'))?.runId).toBe('r-cmd');
    await close();
  });

  it('refuses an operation it does not know with INVALID_ARGUMENT naming it', async () => {
    const { ops, close } = await setup({ spawn: false });
    await expect(applyOperation(ops, { method: 'reboot', args: [] } as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unknown_operation', method: 'reboot' }, message: expect.stringContaining('method="reboot"') });
    // Not an operation, though every object has it.
    await expect(applyOperation(ops, { method: 'constructor', args: [] } as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unknown_operation' } });
    await close();
  });
});

describe('finished runs through the operations', () => {
  it('lists finished runs by how they ended, reads one, and reports its status from the record', async () => {
    const { ops, runtime, close } = await setup();
    await ops.submit({ runId: 'r-ok', input: utf8('ok') });
    await ops.submit({ runId: 'r-bad', input: utf8('bad') });
    await ops.submit({ runId: 'r-wait', input: utf8('wait') });
    await runtime.result('r-ok');
    await runtime.result('r-bad');

    const all = await ops.listFinishedRuns();
    expect(all.runs.map((r) => [r.runId, r.status])).toEqual([
      ['r-bad', 'failed'],
      ['r-ok', 'succeeded'],
    ]);
    expect(all.nextCursor).toBeUndefined();
    expect((await ops.listFinishedRuns({ status: 'succeeded' })).runs).toEqual([expect.objectContaining({ runId: 'r-ok', result: utf8('done'), error: null, endedAtMs: expect.any(Number) })]);
    expect((await ops.listFinishedRuns({ status: ['failed', 'cancelled'] })).runs).toEqual([expect.objectContaining({ runId: 'r-bad', error: 'it went wrong' })]);
    const page = await ops.listFinishedRuns({ limit: 1 });
    expect(page.runs.map((r) => r.runId)).toEqual(['r-bad']);
    expect((await ops.listFinishedRuns({ cursor: page.nextCursor })).runs.map((r) => r.runId)).toEqual(['r-ok']);
    // Crosses a worker boundary as plain data.
    expect(structuredClone(all)).toEqual(all);

    expect(await ops.getFinishedRun('r-ok')).toMatchObject({ runId: 'r-ok', status: 'succeeded', result: utf8('done'), finalStep: 0 });
    // Active, or never seen: no finished run.
    expect(await ops.getFinishedRun('r-wait')).toBeNull();
    expect(await ops.getFinishedRun('r-none')).toBeNull();

    // This LocalOperations saw no ending (no noteTerminal): the record answers.
    expect(await ops.status('r-ok')).toEqual({ runId: 'r-ok', state: 'succeeded', currentStep: 0, result: utf8('done'), error: null });
    expect(await ops.status('r-bad')).toMatchObject({ state: 'failed', error: 'it went wrong' });
    expect(await ops.status('r-none')).toBeNull();
    await close();
  });

  it('refuses a finished-run listing by an active state, and bad ids, with typed errors', async () => {
    const { ops, close } = await setup({ spawn: false });
    await expect(ops.listFinishedRuns({ status: 'running' as never })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_status', status: 'running' }, message: expect.stringContaining('status="running"') });
    await expect(ops.listFinishedRuns({ status: ['succeeded', 'pending'] as never })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_status' } });
    await expect(ops.listFinishedRuns({ status: [] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_status' } });
    await expect(ops.getFinishedRun('has space')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_run_id' } });
    await expect(ops.runWait('has space', 10)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_run_id' } });
    await close();
  });

  it('runWait answers a finished run at once, null while the run is active, the outcome once it ends', async () => {
    const { ops, close } = await setup();
    await ops.submit({ runId: 'r-ok', input: utf8('ok') });
    expect(await ops.runWait('r-ok', 10_000)).toMatchObject({ runId: 'r-ok', status: 'succeeded', result: utf8('done') });

    await ops.submit({ runId: 'r-wait', input: utf8('wait') });
    expect(await ops.runWait('r-wait', 20)).toBeNull();
    const waiting = ops.runWait('r-wait', 10_000);
    await ops.signal('go:r-wait', utf8('go'));
    expect(await waiting).toMatchObject({ runId: 'r-wait', status: 'succeeded' });

    await expect(ops.runWait('r-none', 10)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(ops.runWait('r-ok', -1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_wait' }, message: expect.stringContaining('waitMs=-1') });
    await close();
  });

  it('a stopped LocalOperations answers its waits at once (null), so its host can hand over', async () => {
    const { ops, close } = await setup();
    await ops.submit({ runId: 'r-wait', input: utf8('wait') });
    const waiting = ops.runWait('r-wait', 60_000);
    ops.stop();
    expect(await waiting).toBeNull();
    expect(await ops.runWait('r-wait', 60_000)).toBeNull();
    await close();
  });
});
