/**
 * The `StepRunner` of a runtime built with `{ workflows }`: each delivery of a run's underlying
 * step replays the run's workflow function (history read with one scan, skipped for a first
 * delivery of step 0, which has none) and runs it until it settles or suspends.
 *
 * - settles with a value: the run succeeds with the value's encoding (the ending deletes the
 *   history: `RuntimeContext.endingDeletes`, which scans for it unless the delivery that started
 *   the run fresh ends it, and stages the keys it wrote with the outcome);
 * - throws (a `StepFailedError` it did not catch, its own error, NON_DETERMINISTIC): the run
 *   fails with the error's text;
 * - suspends (a durable sleep or signal wait): the next underlying step is scheduled for the
 *   earliest wake-up, or set to wait on the signal's correlation key;
 * - a history write fails (store error, CLOSED, lost claim): the delivery throws, so the queue
 *   delivers the step again and the function replays.
 * While the function runs, the step's lease is kept (a function may run for hours).
 */
import { startTimer } from '../../clock.js';
import { decodeValue, encodeValue } from '../../codec.js';
import { isTaqubaError } from '../../errors.js';
import type { RuntimeContext } from '../context.js';
import { StepOutcome } from '../steps/outcome.js';
import { StepError } from '../steps/step-error.js';
import type { Step, StepRunnerObject } from '../steps/step.js';
import { DeliveredStep } from '../steps/delivered-step.js';
import { errorText, Execution, type CallObserver, type Halt } from './context.js';
import { encodeSignalValue } from './signal-value.js';
import { validateRunId } from '../validation.js';
import { functionSignalKey } from './signal-key.js';
import type { CommandOptions } from '../commands/ledger.js';
import type { WorkflowRegistry } from './define.js';
import { decodeEnvelope, encodeEnvelope, type Envelope } from './envelope.js';
import { emptyHistory, historyPrefix, loadHistory } from './history.js';
import { PARENT_RUN_HEADER, type ChildStarter } from './children.js';
import { startSpec } from './workflow-run.js';
import { finishedRunRetention, readFinishedRun } from '../history/finished-runs.js';
import type { RunSpec, SubmitOutcome } from '../runs/submit.js';
import { InvalidConfigError } from '../../errors.js';
import { ExecutionTrace } from './execution-trace.js';
import { HEADER_TRACEPARENT } from '../../trace-context.js';

/** Signal `name` of run `runId` carrying `value`, as sent. INVALID_ARGUMENT for a bad run id or a value the codec cannot store. */
export function functionSignal(runId: string, name: string, value: unknown): { readonly correlationKey: string; readonly payload: Uint8Array } {
  validateRunId(runId);
  return { correlationKey: functionSignalKey(runId, name), payload: encodeSignalValue(value) };
}

/** The two forms of `signal`, `(correlationKey, bytes, options?)` and `(runId, name, value, options?)`, as one. */
export function signalArguments(
  keyOrRunId: string,
  payloadOrName: Uint8Array | string,
  valueOrOptions: unknown,
  maybeOptions: CommandOptions | undefined,
): { readonly correlationKey: string; readonly payload: Uint8Array; readonly options: CommandOptions | undefined } {
  if (typeof payloadOrName === 'string') return { ...functionSignal(keyOrRunId, payloadOrName, valueOrOptions), options: maybeOptions };
  return { correlationKey: keyOrRunId, payload: payloadOrName, options: valueOrOptions as CommandOptions | undefined };
}

type Settled = { readonly type: 'done'; readonly value: unknown } | { readonly type: 'threw'; readonly error: unknown };

export class FunctionRunner implements StepRunnerObject {
  private readonly children: ChildStarter;

  constructor(
    readonly workflows: WorkflowRegistry,
    private readonly runtime: () => RuntimeContext,
    submit: (spec: RunSpec) => Promise<SubmitOutcome>,
  ) {
    this.children = {
      check: (workflow) => {
        this.workflows.check(workflow);
        // A child's outcome is read back from its finished-run record when the parent replays.
        if (finishedRunRetention(this.runtime()) <= 0) throw new InvalidConfigError('ctx.invoke needs outcomeRetentionMs above 0 (a child is told finished by its kept outcome)', { option: 'outcomeRetentionMs' });
      },
      ensureStarted: async (workflow, input, childRunId, tag, traceparent) => {
        const ctx = this.runtime();
        const ended = await readFinishedRun(ctx.queue, ctx.queueName, childRunId);
        if (ended !== null && ended.headers[PARENT_RUN_HEADER] === tag) return;
        // The parent's trace context travels explicitly: not every platform carries the active span across awaits.
        const headers: Record<string, string> = { [PARENT_RUN_HEADER]: tag };
        if (traceparent !== undefined) headers[HEADER_TRACEPARENT] = traceparent;
        // The parent waits for this very run: a debounce default, which could fold it into another run, does not apply to a child.
        const { debounce: _debounce, ...spec } = startSpec(workflow, input, { runId: childRunId, headers });
        await submit(spec);
      },
    };
  }

  /** Runs one delivery of a run's step; `onCall` hears of each `ctx` call it records (the browser host's run events). */
  async runStep(step: Step, onCall?: CallObserver): Promise<StepOutcome> {
    const ctx = this.runtime();
    let envelope: Envelope;
    try {
      envelope = decodeEnvelope(step.payload, step.runId);
    } catch (e) {
      // A run submitted with raw bytes (`submit`) to a functions runtime: no attempt can run it,
      // so the run fails at once (a verdict, not a dead step an operator would retry in vain).
      return StepOutcome.fail(errorText(e));
    }
    const workflow = this.workflows.get(envelope.name, envelope.version);
    // Transient: a deployment may add the definition back; until then the step backs off and,
    // out of attempts, waits as a dead step an operator can retry.
    if (workflow === undefined) throw StepError.transient(`workflow ${envelope.name}@${envelope.version} is not registered on this runtime (registered: ${this.workflows.describe()})`);
    const gen = envelope.gen ?? step.jobId;
    const prefix = historyPrefix(ctx.queueName, step.runId, gen);
    // A step 0 whose payload names its generation came with its history (an imported run, archive/).
    const fresh = step.stepNumber === 0 && step.attempt === 1 && step.interruptions === 0 && envelope.gen === undefined;
    const trace = ExecutionTrace.of(ctx.tracer, step, `${envelope.name}@${envelope.version}`);
    const observe = trace === undefined ? onCall : trace.observer(onCall);
    const exec = new Execution({
      runId: step.runId,
      version: envelope.version,
      queue: ctx.queue,
      clock: ctx.clock,
      log: ctx.log,
      prefix,
      history: fresh ? emptyHistory() : await loadHistory(ctx.queue, prefix),
      stepNumber: step.stepNumber,
      wokenWith: step.signalPayload,
      // The step itself: its signal is created only if the function reads it.
      cancel: step,
      stepDefaults: workflow.stepDefaults,
      gen,
      children: this.children,
      ...(observe === undefined ? {} : { onCall: observe }),
      ...(trace === undefined ? {} : { trace }),
      ...(step instanceof DeliveredStep && step.workerStopping ? { stopping: step.workerStopping } : {}),
      ...(step instanceof DeliveredStep && step.slot ? { slot: step.slot } : {}),
    });
    const stopLease = keepLease(step, ctx, exec);
    let end: Settled | Halt;
    try {
      const input = decodeValue(envelope.input);
      const settled = Promise.resolve()
        .then(() => workflow.run(exec, input))
        .then(
          (value): Settled => ({ type: 'done', value }),
          (error: unknown): Settled => ({ type: 'threw', error }),
        );
      end = await Promise.race([settled, exec.halted]);
    } finally {
      exec.close();
      stopLease();
    }
    if (end.type === 'broken') throw end.error;
    await exec.flush();
    const payload = (): Uint8Array => encodeEnvelope({ ...envelope, gen });
    // A fresh run that ends in this delivery wrote its whole history here (a delivery that took
    // it over would have its claim, and this ending would not commit): the ending deletes exactly
    // those keys instead of scanning for them.
    const ends = (outcome: StepOutcome): StepOutcome => {
      const keys = fresh ? exec.writtenKeys() : undefined;
      if (keys !== undefined) step.effects.deleteRunHistory(keys);
      return outcome;
    };
    switch (end.type) {
      case 'suspend': {
        const delayMs = Math.max(0, end.untilMs - ctx.clock.now());
        return end.wait === undefined ? StepOutcome.continueAfter(payload(), delayMs) : StepOutcome.continueOnSignal(payload(), functionSignalKey(step.runId, end.wait.name), delayMs);
      }
      case 'fatal':
        return ends(StepOutcome.fail(errorText(end.error)));
      case 'done': {
        let result: Uint8Array;
        try {
          result = encodeValue(end.value);
        } catch (e) {
          return ends(StepOutcome.fail(`INVALID_ARGUMENT: the workflow returned a value that cannot be stored: ${e instanceof Error ? e.message : String(e)}`));
        }
        return ends(StepOutcome.succeed(result));
      }
      case 'threw':
        // A cancelled run settles as cancelled whatever the step returns; infrastructure errors
        // the function let through are the delivery's, not the run's: deliver it again.
        if (step.signal.aborted || isInfrastructure(end.error)) throw end.error;
        return ends(StepOutcome.fail(errorText(end.error)));
    }
  }

}

const INFRASTRUCTURE = new Set(['CLOSED', 'FENCED', 'CLAIM_LOST', 'CONFLICT', 'STORE_UNAVAILABLE', 'STORE_PERMISSION', 'CORRUPT_DATA', 'LOCKED', 'INTERNAL']);

function isInfrastructure(e: unknown): boolean {
  return isTaqubaError(e) && INFRASTRUCTURE.has(e.code);
}

/** Renews the step's lease every third of the queue's lease while the function runs; returns its stop. */
function keepLease(step: Step, ctx: RuntimeContext, exec: Execution): () => void {
  const leaseMs = ctx.queue.queueConfig(ctx.queueName).leaseMs;
  let cancel = (): void => undefined;
  const arm = (): void => {
    cancel = startTimer(ctx.clock, leaseMs / 3, () => {
      try {
        step.lease.ensureAtLeast(leaseMs);
      } catch (error) {
        // A cancel shows on `step.signal`; a lost claim means another delivery owns the run now.
        if (!isTaqubaError(error, 'CANCELLED')) exec.abort(error);
        return;
      }
      arm();
    });
  };
  arm();
  // A timer, not a sleep with a signal: most deliveries end long before the first renewal, and
  // cancelling a sleep costs an AbortController and an abort event each time.
  return () => cancel();
}
