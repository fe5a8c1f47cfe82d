/**
 * Issue #13: step failures, retries and dead letters are logged without a hook. A capturing
 * logger sees a retry (warn: run id, step, attempt, error, next delay) and a dead letter (error:
 * run id, step, reason), with the stack of a runner's unexpected (non-StepError) throw; `logger:
 * false` logs nothing; the runtime uses the queue's logger unless given its own; a failing
 * logger never stalls a step. Also: both runner forms (a function and an object) run.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isTaqubaError } from '../../../src/core/errors.js';
import type { LogFields, Logger } from '../../../src/core/logger.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { Queue } from '../../../src/core/queue/index.js';
import { NoopTerminalHook, StepError, StepOutcome, WorkflowRuntime, type Step, type StepRunner, type StepRunnerObject } from '../../../src/core/workflow/index.js';
import { b, eventually, makeHarness, RecordingHook, s } from './harness.js';

interface Line {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields: LogFields | undefined;
}

function capturingLogger(): Logger & { lines: Line[]; at(level: Line['level'], pattern: RegExp): Line[] } {
  const lines: Line[] = [];
  const push = (level: Line['level']) => (message: string, fields?: LogFields) => void lines.push({ level, message, fields });
  return {
    lines,
    debug: push('debug'),
    info: push('info'),
    warn: push('warn'),
    error: push('error'),
    at: (level, pattern) => lines.filter((l) => l.level === level && pattern.test(l.message)),
  };
}

const memory = () => new MemoryObjectStore();

afterEach(() => {
  vi.restoreAllMocks();
});

describe('workflow runtime logging', () => {
  it('a retry is logged at warn and the dead letter at error, with run id, step, attempt, error, next delay and the stack of an unexpected throw', async () => {
    const h = await makeHarness(memory, { defaultQueueConfig: { retryBackoffBaseMs: 1_000 } });
    const log = capturingLogger();
    const hook = new RecordingHook();
    const { runtime } = h.start(async () => {
      throw new Error('model unavailable');
    }, hook, { logger: log });
    await runtime.submit({ runId: 'report-42', input: b('x'), maxAttemptsPerStep: 2 });

    await eventually(() => log.at('warn', /retrying/).length === 1, 5000, 'the retry log');
    const [retry] = log.at('warn', /retrying/);
    expect(retry!.message).toBe('[workflow] step failed; retrying');
    expect(retry!.fields).toMatchObject({ runId: 'report-42', step: 0, attempt: 1, maxAttempts: 2, error: 'model unavailable', nextDelayMs: 1_000 });
    expect(retry!.fields!.stack).toMatch(/^Error: model unavailable\n\s+at /);
    expect(log.at('error', /./)).toEqual([]);

    await h.advance(1_000);
    const outcome = await hook.first();
    expect(outcome).toMatchObject({ runId: 'report-42', status: 'failed', error: 'model unavailable' });
    const dead = log.at('error', /dead-lettered/);
    expect(dead).toHaveLength(1);
    expect(dead[0]!.message).toBe('[workflow] step out of attempts, dead-lettered; run failed');
    expect(dead[0]!.fields).toMatchObject({ runId: 'report-42', step: 0, attempt: 2, maxAttempts: 2, reason: 'model unavailable' });
    expect(dead[0]!.fields!.stack).toMatch(/model unavailable/);
    expect(log.at('warn', /retrying/)).toHaveLength(1);
  });

  it('a permanent StepError dead-letters at once, logged at error with its reason and no stack (a verdict, not a crash)', async () => {
    const h = await makeHarness(memory);
    const log = capturingLogger();
    const hook = new RecordingHook();
    const { runtime } = h.start(async () => {
      throw StepError.permanent('invoice is malformed');
    }, hook, { logger: log });
    await runtime.submit({ runId: 'inv-1', input: b('x'), maxAttemptsPerStep: 5 });
    expect(await hook.first()).toMatchObject({ status: 'failed', error: 'invoice is malformed' });
    await eventually(() => log.at('error', /dead-lettered/).length > 0, 5000, 'the dead letter log');
    const dead = log.at('error', /dead-lettered/);
    expect(dead[0]!.message).toBe('[workflow] step dead-lettered; run failed');
    expect(dead[0]!.fields).toMatchObject({ runId: 'inv-1', step: 0, attempt: 1, reason: 'invoice is malformed' });
    expect(dead[0]!.fields).not.toHaveProperty('stack');
    expect(log.at('warn', /retrying/)).toEqual([]);
  });

  it('run outcomes log at info and step outcomes at debug', async () => {
    const h = await makeHarness(memory);
    const log = capturingLogger();
    const hook = new RecordingHook();
    const { runtime } = h.start(async (step) => (step.stepNumber === 0 ? StepOutcome.continueNow(step.payload) : StepOutcome.fail('rejected')), hook, { logger: log });
    await runtime.submit({ runId: 'r-1', input: b('x') });
    await hook.first();
    await eventually(() => log.at('info', /run failed/).length === 1);
    expect(log.at('info', /run failed/)[0]!.fields).toEqual({ runId: 'r-1', step: 1, reason: 'rejected' });
    expect(log.at('debug', /step finished/).map((l) => [l.fields!.step, l.fields!.outcome])).toEqual([
      [0, 'continue'],
      [1, 'fail'],
    ]);
    // A `fail` verdict is an outcome, not an error.
    expect(log.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
  });

  it('a terminal hook that throws is logged as a retry at warn', async () => {
    const h = await makeHarness(memory);
    const log = capturingLogger();
    const hook = new RecordingHook((_o, _e, call) => {
      if (call === 1) throw new Error('webhook down');
    });
    const { runtime } = h.start(async () => StepOutcome.succeed(b('ok')), hook, { logger: log });
    await runtime.submit({ runId: 'hooked', input: b('x') });
    await hook.first();
    const [retry] = log.at('warn', /terminal hook failed; retrying/);
    expect(retry!.fields).toMatchObject({ runId: 'hooked', status: 'succeeded', attempt: 1, error: 'webhook down', nextDelayMs: 0 });
  });

  it('the runtime logs through the queue logger unless given its own', async () => {
    const queueLog = capturingLogger();
    const h = await makeHarness(memory, { logger: queueLog, defaultQueueConfig: { retryBackoffBaseMs: 0 } });
    const hook = new RecordingHook();
    let calls = 0;
    const runtime = new WorkflowRuntime(h.queue, h.store, async () => {
      if (++calls === 1) throw new Error('flaky');
      return StepOutcome.succeed(b('done'));
    }, hook);
    const handle = runtime.spawn();
    try {
      await runtime.submit({ runId: 'inherits', input: b('x') });
      expect(await hook.first()).toMatchObject({ status: 'succeeded' });
      expect(queueLog.at('warn', /retrying/)[0]!.fields).toMatchObject({ runId: 'inherits', error: 'flaky' });
    } finally {
      await handle.shutdown();
    }
  });

  it('logger: false on the runtime logs nothing, even where the queue would', async () => {
    const queueLog = capturingLogger();
    const h = await makeHarness(memory, { logger: queueLog });
    const hook = new RecordingHook();
    const { runtime } = h.start(async () => {
      throw StepError.permanent('nope');
    }, hook, { logger: false });
    await runtime.submit({ runId: 'quiet', input: b('x') });
    expect(await hook.first()).toMatchObject({ status: 'failed' });
    expect(queueLog.lines).toEqual([]);
  });

  it('by default a retry and a dead letter reach the console (warn, error); Queue.open logger: false silences the runtime too', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const failing = async (): Promise<StepOutcome> => {
      throw new Error('boom');
    };
    for (const logger of [undefined, false] as const) {
      const store = new MemoryObjectStore();
      const queue = await Queue.open(store, 'logs', { ...(logger === undefined ? {} : { logger }), defaultQueueConfig: { retryBackoffBaseMs: 0, maxAttempts: 2 } });
      const hook = new RecordingHook();
      const runtime = new WorkflowRuntime(queue, store, failing, hook);
      const handle = runtime.spawn();
      await runtime.submit({ runId: `default-${String(logger)}`, input: b('x') });
      await hook.first();
      await handle.shutdown();
      await queue.close();
    }
    const printed = [...warn.mock.calls, ...error.mock.calls].map((c) => String(c[0]));
    expect(printed.filter((l) => l.includes('default-false'))).toEqual([]);
    const retry = warn.mock.calls.map((c) => String(c[0])).find((l) => l.includes('default-undefined'));
    expect(retry).toMatch(/^\[taquba\] \[workflow\] step failed; retrying\. runId=default-undefined step=0 attempt=1 maxAttempts=2 error=boom nextDelayMs=0 jobId=\S+\nError: boom\n\s+at /);
    const dead = error.mock.calls.map((c) => String(c[0])).find((l) => l.includes('default-undefined'));
    expect(dead).toMatch(/^\[taquba\] \[workflow\] step out of attempts, dead-lettered; run failed\. runId=default-undefined step=0 attempt=2 maxAttempts=2 reason=boom/);
  });

  it('a logger that throws loses its line, not the step: the run still retries and succeeds', async () => {
    const h = await makeHarness(memory);
    const hook = new RecordingHook();
    let calls = 0;
    const { runtime } = h.start(async () => {
      if (++calls < 3) throw new Error('flaky');
      return StepOutcome.succeed(b('ok'));
    }, hook, {
      logger: {
        warn: () => {
          throw new Error('logger broke');
        },
      },
    });
    await runtime.submit({ runId: 'survives', input: b('x') });
    expect(await hook.first()).toMatchObject({ status: 'succeeded' });
    expect(calls).toBe(3);
  });

  it.each([
    ['a string', 'console', /logger must be a logger object \(debug\/info\/warn\/error methods\) or false/],
    ['true', true, /logger must be a logger object/],
    ['null', null, /logger must be a logger object/],
    ['a non-function level', { warn: 'loud' }, /logger\.warn must be a function/],
  ])('rejects %s as logger with INVALID_CONFIG, at Queue.open and in the runtime', async (_name, logger, message) => {
    const store = new MemoryObjectStore();
    const err = await Queue.open(store, 'bad-logger', { logger: logger as never }).catch((e: unknown) => e);
    expect(isTaqubaError(err, 'INVALID_CONFIG')).toBe(true);
    expect((err as Error).message).toMatch(message);
    const queue = await Queue.open(store, 'bad-logger', { logger: false });
    try {
      expect(() => new WorkflowRuntime(queue, store, async () => StepOutcome.succeed(b('')), new NoopTerminalHook(), { logger: logger as never })).toThrow(message);
    } finally {
      await queue.close();
    }
  });
});

describe('StepRunner forms', () => {
  // Compile-time checks (npm run typecheck covers test/): both forms are a `StepRunner`.
  const fnRunner: StepRunner = async (step) => StepOutcome.succeed(step.payload);
  class Upper implements StepRunnerObject {
    constructor(private readonly suffix: string) {}
    async runStep(step: Step): Promise<StepOutcome> {
      return StepOutcome.succeed(b(`${s(step.payload).toUpperCase()}${this.suffix}`));
    }
  }
  const objectRunner: StepRunner = new Upper('!');

  it.each([
    ['a function', fnRunner, 'abc'],
    ['an object whose runStep uses this', objectRunner, 'ABC!'],
  ])('%s runs as the runner', async (_name, runner, expected) => {
    const h = await makeHarness(memory);
    const hook = new RecordingHook();
    const { runtime } = h.start(runner, hook);
    await runtime.submit({ runId: 'form', input: b('abc') });
    const outcome = await hook.first();
    expect(outcome.status).toBe('succeeded');
    expect(s(outcome.result!)).toBe(expected);
  });

  it.each([
    ['null', null],
    ['an object without runStep', { run: async () => StepOutcome.succeed(b('')) }],
    ['a string', 'runner'],
  ])('rejects %s as runner with INVALID_ARGUMENT (reason invalid_runner)', async (_name, runner) => {
    const h = await makeHarness(memory);
    let err: unknown;
    try {
      h.runtime(runner as never, new NoopTerminalHook());
    } catch (e) {
      err = e;
    }
    expect(isTaqubaError(err, 'INVALID_ARGUMENT')).toBe(true);
    expect((err as { details: { reason: string } }).details.reason).toBe('invalid_runner');
    expect((err as Error).message).toMatch(/^runner must be a function \(step\) => Promise<StepOutcome> or implement runStep\(step\)/);
  });
});
