/** Store-independent units: outcomes, step errors, effects handles, replay delays, detached steps. */
import { describe, expect, it } from 'vitest';
import { TaqubaError } from '../../../src/core/errors.js';
import { MAX_KV_VALUE_SIZE } from '../../../src/core/queue/index.js';
import {
  detachedStep,
  EffectsHandle,
  InputMismatchError,
  KvReadHandle,
  remainingDelay,
  StepError,
  StepOutcome,
  TerminalEffects,
  Trigger,
} from '../../../src/core/workflow/index.js';
import { b } from './harness.js';

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as TaqubaError).details?.reason ?? (e as TaqubaError).code;
  }
  return 'no error';
};

describe('StepOutcome and Trigger', () => {
  it('builds each outcome', () => {
    expect(StepOutcome.continueNow(b('p'))).toEqual({ type: 'continue', payload: b('p'), when: { type: 'immediate' } });
    expect(StepOutcome.continueAfter(b('p'), 5)).toEqual({ type: 'continue', payload: b('p'), when: { type: 'after', delayMs: 5 } });
    expect(StepOutcome.continueOnSignal(b('p'), 'k', 9)).toEqual({ type: 'continue', payload: b('p'), when: { type: 'onSignal', correlationKey: 'k', timeoutMs: 9 } });
    expect(StepOutcome.continueWith(b('p'), Trigger.after(1)).type).toBe('continue');
    expect(StepOutcome.succeed(b('r'))).toEqual({ type: 'succeed', result: b('r') });
    expect(StepOutcome.fail('no')).toEqual({ type: 'fail', reason: 'no' });
    expect(StepOutcome.cancel('stop')).toEqual({ type: 'cancel', reason: 'stop' });
  });

  it('rejects bad arguments with INVALID_ARGUMENT', () => {
    expect(code(() => StepOutcome.continueAfter(b('p'), -1))).toBe('invalid_outcome');
    expect(code(() => StepOutcome.continueOnSignal(b('p'), '', 1))).toBe('invalid_correlation_key');
    expect(code(() => StepOutcome.succeed('text' as never))).toBe('invalid_outcome');
    expect(code(() => Trigger.after(Number.NaN))).toBe('invalid_outcome');
  });
});

describe('StepError', () => {
  it('keeps its kind; classifies thrown values', () => {
    expect(StepError.transient('t').kind).toBe('transient');
    expect(StepError.permanent(new Error('p'))).toMatchObject({ kind: 'permanent', message: 'p' });
    expect(StepError.from(new Error('plain')).kind).toBe('transient');
    expect(StepError.from('string').kind).toBe('transient');
    expect(StepError.from(new InputMismatchError('r')).kind).toBe('permanent');
    expect(StepError.from(new TaqubaError('STORE_UNAVAILABLE', 'outage')).kind).toBe('transient');
    expect(StepError.from(new TaqubaError('INVALID_ARGUMENT', 'bad')).kind).toBe('permanent');
    expect(StepError.from(new TaqubaError('CORRUPT_DATA', 'bad')).kind).toBe('permanent');
    expect(StepError.from(new TaqubaError('CLOSED', 'closed')).kind).toBe('transient');
    const e = StepError.permanent('x');
    expect(StepError.from(e)).toBe(e);
    expect(e instanceof StepError && e instanceof Error).toBe(true);
  });

  it('InputMismatchError carries INPUT_MISMATCH and the run id', () => {
    const e = new InputMismatchError('run-9');
    expect(e).toBeInstanceOf(TaqubaError);
    expect(e).toMatchObject({ code: 'INPUT_MISMATCH', details: { runId: 'run-9' } });
    expect(e.message).toContain('run-9');
  });
});

describe('effects handles', () => {
  it('rejects reserved keys, oversized values and write/delete conflicts as they are staged', () => {
    const fx = new EffectsHandle();
    expect(code(() => fx.put('workflow/x', b('1')))).toBe('reserved_kv_key');
    expect(code(() => fx.delete(b('workflow/x')))).toBe('reserved_kv_key');
    expect(code(() => fx.put('big', new Uint8Array(MAX_KV_VALUE_SIZE + 1)))).toBe('kv_value_too_large');
    fx.put('a', b('1'));
    fx.put('a', b('2'));
    expect(code(() => fx.delete('a'))).toBe('conflicting_kv_effect');
    fx.delete('b');
    expect(code(() => fx.put('b', b('1')))).toBe('conflicting_kv_effect');
    expect(fx.staged()).toEqual({ writes: [[b('a'), b('2')]], deletes: [b('b')] });
    fx.seal();
    expect(code(() => fx.put('c', b('1')))).toBe('effects_sealed');
    expect(code(() => fx.delete('c'))).toBe('effects_sealed');
  });

  it('a terminal handle follows the same rules and seals enqueues too', () => {
    const fx = new TerminalEffects();
    expect(code(() => fx.put('workflow/x', b('1')))).toBe('reserved_kv_key');
    fx.put('a', b('1'));
    expect(code(() => fx.delete('a'))).toBe('conflicting_kv_effect');
    fx.enqueue({ queue: 'q', payload: b('p') });
    expect(fx.toSettlementEffects()).toEqual({ enqueues: [{ queue: 'q', payload: b('p') }], kvWrites: [[b('a'), b('1')]], kvDeletes: [] });
    fx.seal();
    expect(code(() => fx.enqueue({ queue: 'q', payload: b('p') }))).toBe('effects_sealed');
    expect(code(() => fx.put('b', b('1')))).toBe('effects_sealed');
  });

  it('a detached KV handle reads null; a detached step validates effects without a runtime', async () => {
    expect(await KvReadHandle.detached().get('anything')).toBeNull();
    const step = detachedStep({ runId: 'unit', payload: b('in') });
    expect(step.lease.ensureAtLeast(1_000_000)).toBe(Number.POSITIVE_INFINITY);
    expect(code(() => step.effects.put('workflow/no', b('1')))).toBe('reserved_kv_key');
    await step.memo.put('k', b('v'));
    expect(await step.memo.get('k')).toEqual(b('v'));
    expect(await step.kv.get('k')).toBeNull();
  });
});

describe('replay delays', () => {
  it('shortens a delay by the elapsed time, saturating, and keeps it when the clock is behind', () => {
    expect(remainingDelay(1_000, 4_000, 10_000)).toBe(7_000);
    expect(remainingDelay(1_000, 20_000, 10_000)).toBe(0);
    expect(remainingDelay(5_000, 1_000, 10_000)).toBe(10_000);
  });
});

describe('runtime options', () => {
  it('rejects bad options with INVALID_CONFIG naming the option', async () => {
    const { MemoryObjectStore } = await import('../../../src/core/objects/memory-store.js');
    const { Queue } = await import('../../../src/core/queue/index.js');
    const { WorkflowRuntime, NoopTerminalHook } = await import('../../../src/core/workflow/index.js');
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'opts', { logger: { warn: () => undefined } });
    const runner = async () => StepOutcome.succeed(new Uint8Array(0));
    const build = (options: object) => () => new WorkflowRuntime(queue, store, runner, new NoopTerminalHook(), options);
    for (const [option, value] of [
      ['maxConcurrentSteps', 0],
      ['pollIntervalMs', 0],
      ['memoRetentionMs', 0],
      ['memoPrefix', 'trailing/'],
      ['memoPrefix', ''],
      ['queueName', ''],
      ['stepMaxAttempts', 1.5],
      ['stepOutputReplay', 'yes'],
      ['nonsense', 1],
    ] as const) {
      expect(build({ [option]: value }), `${option}=${String(value)}`).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    }
    expect(() => new WorkflowRuntime(queue, store, {} as never, new NoopTerminalHook())).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    // Issue #12: memo keys map to filesystem paths, so '.' and '..' segments are refused at construction.
    for (const memoPrefix of ['../escape', 'a/./b', 'a/..', '/abs', 'a//b']) {
      expect(build({ memoPrefix }), memoPrefix).toThrow(
        expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringMatching(/^memoPrefix must be an object-key prefix/), details: { option: 'memoPrefix', value: JSON.stringify(memoPrefix) } }),
      );
    }
    const runtime = new WorkflowRuntime(queue, store, runner, new NoopTerminalHook(), { queueName: 'agents', memoPrefix: 'a/b' });
    expect(runtime.queueName).toBe('agents');
    expect(runtime.clock).toBe(queue.clock);
    await queue.close();
  });
});
