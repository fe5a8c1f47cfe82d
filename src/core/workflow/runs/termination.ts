/**
 * Termination effects: what every path that ends a run commits in the same transaction as its
 * queue transition (ack, dead-letter, exhausting nack, cancel removal, reconciliation). Built
 * purely, without I/O:
 * 1. delete the run record and the step pointer (the run id is released);
 * 2. write the terminal marker when memo retention is on (so a marker exists exactly when the
 *    termination committed);
 * 3. write the finished-run record and its retention index entry when outcome retention is on
 *    (finished-runs.ts), for the same reason;
 * 4. enqueue the notification job when the hook observes the outcome (deduplicated per run).
 * Every path commits them through `commitEnding`, which adds what a workflow function's ending
 * also deletes (read from the store) under the run's ending lock.
 */
import { perHandle } from '../handle-state.js';
import type { EnqueueOptions, EnqueueRequest } from '../../queue/index.js';
import { KeyedMutex } from '../../keyed-mutex.js';
import type { RuntimeContext } from '../context.js';
import { HEADER_RUN_ID, HEADER_TERMINAL } from '../constants.js';
import { runRecordKey, stepPointerKey, terminalDedupKey, terminalMarkerKey } from '../keys.js';
import { encodeRunOutcome } from '../records.js';
import { finishedRunRetention, finishedRunWrites, type EndingFacts } from '../history/finished-runs.js';
import { hookObserves, type RunOutcome } from './terminal-hook.js';
import { commitFlowEnding } from '../flow/flow-ending.js';
import type { FlowHeaders } from '../flow/flow-locks.js';

/** Settlement effects under construction (mutable so callers can add their own). */
export interface EffectsBuilder {
  readonly enqueues: EnqueueRequest[];
  readonly kvWrites: (readonly [Uint8Array, Uint8Array])[];
  readonly kvDeletes: Uint8Array[];
  /** What runs once these effects committed (`SettlementEffects.onCommitted`). */
  onCommitted?: (() => void)[];
  /** The deletes already hold the run's whole history (`StagedKvEffects.runHistoryStaged`). */
  runHistoryStaged?: boolean;
}

function emptyEffects(): EffectsBuilder {
  return { enqueues: [], kvWrites: [], kvDeletes: [] };
}

/** Priority and attempts of the notification job; unset fields take the queue's defaults. */
export interface NotificationJobOptions {
  readonly priority?: number;
  readonly maxAttempts?: number;
}

/** The per-run ending locks of a queue handle, shared by every runtime built on it (`RuntimeContext.endingLocks`). */
export const endingLocksOf = perHandle(() => new KeyedMutex());

/**
 * Commits an ending of `runId` (`commit` settles with `effects`) after adding what every ending
 * deletes besides the run's records (`RuntimeContext.endingDeletes`), both under the run's ending
 * lock, so that no signal is buffered for the run between the read and the commit. `flow`: the
 * flow headers of the run's step job; its slot and debounce window are released with the ending
 * (flow/flow-ending.ts).
 */
export async function commitEnding<T>(ctx: RuntimeContext, runId: string, effects: EffectsBuilder, commit: () => Promise<T>, flow?: FlowHeaders): Promise<T> {
  const settle = flow === undefined ? commit : (): Promise<T> => commitFlowEnding(ctx, runId, flow, effects, commit);
  const endingDeletes = ctx.endingDeletes;
  if (endingDeletes === undefined) return settle();
  return ctx.endingLocks.run(runId, async () => {
    effects.kvDeletes.push(...(await endingDeletes(runId, effects.runHistoryStaged === true)));
    return settle();
  });
}

/**
 * The effects ending a run with `outcome`. `facts` (the run's submission time, the final step's
 * tries) go into the finished-run record; a path that does not pass them gets what the registry
 * remembers, else null there.
 */
export function terminationEffects(ctx: RuntimeContext, outcome: RunOutcome, job: NotificationJobOptions = {}, facts: EndingFacts = {}): EffectsBuilder {
  const effects = emptyEffects();
  effects.kvDeletes.push(runRecordKey(outcome.runId), stepPointerKey(outcome.runId));
  if (ctx.memoRetentionMs !== null) effects.kvWrites.push([terminalMarkerKey(ctx.clock.now(), outcome.runId), new Uint8Array(0)]);
  if (finishedRunRetention(ctx) > 0) effects.kvWrites.push(...finishedRunWrites(ctx, outcome, facts));
  if (hookObserves(ctx.hook, outcome)) {
    const options: { -readonly [K in keyof EnqueueOptions]: EnqueueOptions[K] } = {
      dedupKey: terminalDedupKey(outcome.runId),
      headers: { [HEADER_RUN_ID]: outcome.runId, [HEADER_TERMINAL]: '1' },
    };
    if (job.priority !== undefined) options.priority = job.priority;
    if (job.maxAttempts !== undefined) options.maxAttempts = job.maxAttempts;
    effects.enqueues.push({ queue: ctx.queueName, payload: encodeRunOutcome(outcome), options });
  }
  return effects;
}
