/**
 * The `run.step` span: one per delivery of a run's step job (an attempt of a `StepRunner` step,
 * or one execution of a workflow function), a child of the run's `run.submit` span through the
 * `taquba-traceparent` header every step job carries, and the active span while the runner runs.
 * It says what the delivery decided (`taquba.step.outcome`) and, when that ended the run, how
 * (`taquba.run.outcome`); what the runner waits for next, and each `memoized` call of its memos
 * (`memo.hit`: answered from the store; `memo.computed`), are events.
 */
import { contextOfTraceparent, HEADER_TRACEPARENT } from '../../trace-context.js';
import { failSpanOutcome, inActiveSpan, SPAN_KIND, type OpenTelemetryTracer, type TraceSpan } from '../../tracing.js';
import type { Memo, MemoizedOptions } from './memo.js';
import type { StepOutcome, Trigger } from './outcome.js';
import { StepError } from './step-error.js';
import type { Step, StepRunnerObject } from './step.js';

/** The span of each delivery in progress, for the function runner to add to. */
const deliverySpans = new WeakMap<Step, TraceSpan>();

/** The `run.step` span of `step` while its runner runs (tracing on), else undefined. */
export function deliverySpanOf(step: Step): TraceSpan | undefined {
  return deliverySpans.get(step);
}

/** `memo` telling `span` whether each `memoized` call was answered from the store. */
function tracedMemo(memo: Memo, span: TraceSpan, scope: 'step' | 'run'): Memo {
  // The memo's own fields are read through the prototype (a memo never writes to itself), and
  // `memoizedByContent` calls `this.memoized`: this one.
  const traced = Object.create(memo) as Memo;
  traced.memoized = async <T>(key: string, compute: () => Promise<T> | T, options?: MemoizedOptions<T>): Promise<T> => {
    let computed = false;
    const value = await memo.memoized(
      key,
      () => {
        computed = true;
        return compute();
      },
      options,
    );
    span.addEvent(computed ? 'memo.computed' : 'memo.hit', { 'taquba.memo.scope': scope, 'taquba.memo.key': key });
    return value;
  };
  return traced;
}

/**
 * `step` with traced memos. A proxy rather than a copy: the processor seals the step it built,
 * and the function runner recognises it (`instanceof DeliveredStep`); getters run on the original.
 */
function withTracedMemos(step: Step, span: TraceSpan): Step {
  let memo: Memo | undefined;
  let runMemo: Memo | undefined;
  return new Proxy(step, {
    get(target, property) {
      if (property === 'memo') return (memo ??= tracedMemo(target.memo, span, 'step'));
      if (property === 'runMemo') return (runMemo ??= tracedMemo(target.runMemo, span, 'run'));
      return Reflect.get(target, property, target);
    },
  });
}

/** What the delivery decided, how the run ended when it did, and (`waits`) what it waits for next. */
function recordOutcome(span: TraceSpan, step: Step, outcome: StepOutcome, waits: boolean): void {
  // An external cancel discards whatever the runner returned: the run ends cancelled.
  if (step.signal.aborted && outcome.type !== 'cancel') {
    span.setAttributes({ 'taquba.step.outcome': 'cancel', 'taquba.run.outcome': 'cancelled' });
    return;
  }
  span.setAttribute('taquba.step.outcome', outcome.type);
  switch (outcome.type) {
    case 'continue': {
      if (!waits) return;
      // Read defensively: a runner may build its outcome by hand.
      const when: Trigger | undefined = outcome.when;
      if (when?.type === 'after' && when.delayMs > 0) span.addEvent('timer.start', { 'taquba.timer.delay_ms': when.delayMs });
      if (when?.type === 'onSignal') span.addEvent('signal.wait', { 'taquba.signal.key': when.correlationKey, 'taquba.signal.timeout_ms': when.timeoutMs });
      return;
    }
    case 'succeed':
      span.setAttribute('taquba.run.outcome', 'succeeded');
      return;
    case 'fail':
      span.setAttribute('taquba.run.outcome', 'failed');
      failSpanOutcome(span, outcome.reason);
      return;
    case 'cancel':
      span.setAttribute('taquba.run.outcome', 'cancelled');
  }
}

/** A runner's throw: a retry, or the end of the run (permanent, out of attempts, cancelled). */
function recordThrow(span: TraceSpan, step: Step, thrown: unknown): void {
  const retries = !StepError.from(thrown).isPermanent && step.attempt < step.maxAttempts && !step.signal.aborted;
  span.setAttribute('taquba.step.outcome', retries ? 'retry' : 'dead');
  if (!retries) span.setAttribute('taquba.run.outcome', step.signal.aborted ? 'cancelled' : 'failed');
}

/**
 * `runner` with each delivery in a `run.step` span. `functions`: the runner runs workflow
 * functions, whose executions tell what woke them (functions/execution-trace.ts).
 */
export function traceRunner(runner: StepRunnerObject, tracer: OpenTelemetryTracer, queueName: string, functions: boolean): StepRunnerObject {
  return {
    runStep(step: Step): Promise<StepOutcome> {
      const attributes = {
        'taquba.queue.name': queueName,
        'taquba.run.id': step.runId,
        'taquba.run.step': step.stepNumber,
        'taquba.step.attempt': step.attempt,
        'taquba.step.max_attempts': step.maxAttempts,
        'taquba.step.interruptions': step.interruptions,
        'taquba.job.id': step.jobId,
      };
      return inActiveSpan(tracer, 'run.step', { kind: SPAN_KIND.consumer, attributes }, contextOfTraceparent(step.headers[HEADER_TRACEPARENT]), async (span) => {
        // A function's execution tells itself what woke it and what it waits for.
        if (step.signalPayload !== null && !functions) span.addEvent('signal.received');
        const traced = functions ? step : withTracedMemos(step, span);
        deliverySpans.set(traced, span);
        try {
          const outcome = await runner.runStep(traced);
          // A malformed outcome is the processor's to refuse; only a well-formed one is described.
          if (typeof (outcome as Partial<StepOutcome> | null)?.type === 'string') recordOutcome(span, step, outcome, !functions);
          return outcome;
        } catch (e) {
          recordThrow(span, step, e);
          throw e;
        } finally {
          deliverySpans.delete(traced);
        }
      });
    },
  };
}
