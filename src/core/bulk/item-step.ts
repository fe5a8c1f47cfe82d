/**
 * The single step of an item run:
 * 1. Decode the payload and the item's input (either bad → permanent failure). An item that
 *    already has its marker is done: succeed at once without running anything.
 * 2. Run the phases in order, each memoized (phase-memo.ts) together with the cost it reported:
 *    a stored phase is not run again, its value and cost are read back. (The last phase is
 *    recorded by the item's marker, committed with the acknowledgement.)
 * 3. Success: stage the item's marker (output and costs) with the acknowledgement and succeed.
 *    Failure: a permanent error or the last attempt stages a failure marker that commits only
 *    with the dead-letter, then rethrows so the queue retries or dead-letters as usual.
 * The batch driver (if this process drives the batch) hears when an item starts, when it is about
 * to settle and, once its settlement committed the marker, the marker itself (an after-commit
 * hook carried by the step's effects), so it learns an item's end without reading the store.
 */
import { EMPTY_BYTES } from '../bytes.js';
import { decodeValue, encodeValue } from '../codec.js';
import { StepOutcome } from '../workflow/steps/outcome.js';
import { StepError } from '../workflow/steps/step-error.js';
import type { Step } from '../workflow/steps/step.js';
import { DeliveredStep } from '../workflow/steps/delivered-step.js';
import { addCost, type CostReport } from './cost.js';
import { memoizedPhase, type PhaseKv } from './phase-memo.js';
import type { PhaseContext, PhaseSpec } from './pipeline.js';
import { decodeItemPayload, encodeMarker, markerKey, phaseKey, type ItemMarker } from './records.js';

/** What the driver of a batch hears from the item steps of this process. */
export interface ItemObserver {
  started(batchId: string, index: number): void;
  /** The step returns and its settlement is about to commit the item's marker. */
  settling(batchId: string, index: number, jobId: string): void;
  /** The item's marker committed (with the acknowledgement or the dead-letter). */
  ended(batchId: string, index: number, marker: ItemMarker): void;
}

export async function runItemStep(phases: readonly PhaseSpec[], step: Step, observer: ItemObserver, kv: PhaseKv, warn: (m: string) => void): Promise<StepOutcome> {
  const item = decodeItemPayload(step.payload);
  if (!item) throw StepError.permanent('the run input is not a bulk item');
  const costs: Record<string, CostReport> = {};
  const failureMarker = (message: string): void => {
    const marker: ItemMarker = { status: 'failed', error: message, cost: costs };
    step.effects.putOnFailure(markerKey(item.batchId, item.index), encodeMarker(marker));
    step.effects.afterFailureCommit(() => observer.ended(item.batchId, item.index, marker));
  };
  let input: unknown;
  try {
    input = decodeValue(item.input);
  } catch (e) {
    const message = `item input does not decode: ${e instanceof Error ? e.message : String(e)}`;
    failureMarker(message);
    observer.settling(item.batchId, item.index, step.jobId);
    throw StepError.permanent(message);
  }
  // A finished item run again (its run resubmitted just as it ended) must not redo its phases:
  // the marker, committed with the first run's end, is its outcome.
  if ((await step.kv.get(markerKey(item.batchId, item.index))) !== null) return StepOutcome.succeed(EMPTY_BYTES);
  observer.started(item.batchId, item.index);
  const slot = step instanceof DeliveredStep ? step.slot : undefined;
  let current: string | undefined;
  try {
    let value = input;
    for (const phase of phases) {
      current = phase.name;
      const previous = value;
      const last = phase === phases[phases.length - 1];
      const record = await memoizedPhase(kv, phaseKey(item.batchId, item.index, phase.name), step.memo, phase.name, last, warn, slot, async () => {
        const cost: Record<string, number> = {};
        const ctx: PhaseContext<unknown> = {
          item: input,
          key: item.key,
          index: item.index,
          batchId: item.batchId,
          phase: phase.name,
          attempt: step.attempt,
          signal: step.signal,
          lease: step.lease,
          effects: step.effects,
          kv: step.kv,
          headers: step.headers,
          cost: (metric, amount) => addCost(cost, metric, amount),
        };
        const v = await phase.run(previous, ctx);
        return { value: v, cost };
      });
      costs[phase.name] = record.cost;
      value = record.value;
    }
    // Encoded while `current` still names the last phase: an unstorable output is its failure.
    const output = encodeValue(value);
    current = undefined;
    const marker: ItemMarker = { status: 'succeeded', output, cost: costs };
    step.effects.putInternal(markerKey(item.batchId, item.index), encodeMarker(marker));
    step.effects.afterCommit(() => observer.ended(item.batchId, item.index, marker));
    observer.settling(item.batchId, item.index, step.jobId);
    return StepOutcome.succeed(EMPTY_BYTES);
  } catch (e) {
    const error = StepError.from(e);
    const where = current === undefined ? 'output' : `phase ${current}`;
    const message = `${where}: ${error.message}`;
    if (error.isPermanent || step.attempt >= step.maxAttempts) {
      failureMarker(message);
      observer.settling(item.batchId, item.index, step.jobId);
      throw new StepError('permanent', message, { cause: e });
    }
    throw new StepError('transient', message, { cause: e });
  }
}
