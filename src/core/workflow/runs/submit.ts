/**
 * Submission, idempotent on (run id, input).
 *
 * Protocol (under a per-run-id lock, so one process never races itself on one id):
 * 1. Validate: run id (or draw a time-ordered one), input bytes, headers outside `workflow.`,
 *    KV writes outside `workflow/` and under the value cap, priority, attempts, runAt.
 * 2. h = SHA-256(input).
 * 3. Registry entry submitted here: same hash ⇒ duplicate (its current job); else INPUT_MISMATCH.
 * 4. Durable run record: same hash ⇒ duplicate, answered with the step pointer's job; else
 *    INPUT_MISMATCH. (Covers restarts and runs whose step 0 was already claimed.)
 * 5. New run: register pending(0) first (so a worker that claims step 0 at once finds the entry),
 *    then one transaction: step 0 (dedup `run:{id}:0`, pre-drawn id) + the caller's KV writes +
 *    run record + step pointer. A dedup hit (a waiting step 0 with no record) applies nothing and
 *    is answered as a duplicate of that job.
 *    With flow control (`concurrency`, `rateLimit`, `debounce`), flow/flow-submit.ts decides under
 *    the keys' locks and adds to the same transaction: a start time and the key's records; or, for
 *    a run waiting for a concurrency slot, no job yet (its record and a pointer marked queued); or,
 *    for a debounced run joining an open window, the window's run takes this input instead (the
 *    answer names that run).
 * 6. With `runIdReuse: 'after-retention'`, before 5: a kept finished-run record of the id answers
 *    as a duplicate with `finished` (another input ⇒ INPUT_MISMATCH, when the record knows the hash).
 * Duplicates never apply their KV writes. A command applied through a carrier keeps its answer
 * in the step-0 transaction (commands/ledger.ts). A run id is released when its run terminates: the next
 * submission under it starts a new run (sharing the old run's memo entries).
 */
import { equalBytes, toHex } from '../../bytes.js';
import { InvalidArgumentError, isTaqubaError } from '../../errors.js';
import { sha256 } from '../../hash.js';
import type { EnqueueOptions } from '../../queue/index.js';
import type { RuntimeContext } from '../context.js';
import { corrupt, InputMismatchError } from '../errors.js';
import { show } from '../../show.js';
import { checkKvValue, checkUserHeaders, checkUserKvKey, kvKeyBytes, validateRunId } from '../validation.js';
import type { KvKey } from '../steps/effects-handle.js';
import type { CommandRecord } from '../commands/ledger.js';
import { checkOptions, optionNames } from '../../options.js';
import { runRecordKey, stepPointerKey } from '../keys.js';
import type { KeyedMutex } from '../../keyed-mutex.js';
import { decodeRunRecord, decodeStepPointer } from '../records.js';
import { checkFlowControl, type FlowControl } from '../flow/flow-options.js';
import { enqueueNewRun, type NewRun } from '../flow/new-run.js';
import { submitWithFlow } from '../flow/flow-submit.js';
import { keepsFinishedRunIds, readFinishedRecord } from '../history/finished-runs.js';
import type { TerminalStatus } from './terminal-hook.js';

/**
 * A run to start. Everything is optional. `concurrency`, `rateLimit` and `debounce` put the run
 * under flow control per key (flow/flow-options.ts).
 */
export interface RunSpec extends FlowControl {
  /** 1..128 characters of `[A-Za-z0-9_-]`; default a fresh time-ordered id. */
  readonly runId?: string;
  /** Payload of step 0 (default empty). Part of the idempotency check. */
  readonly input?: Uint8Array;
  /** Threaded through every step and the terminal outcome; `workflow.*` names are reserved. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Queue priority of every step (lower is claimed first). Default: the queue's. */
  readonly priority?: number;
  /** Attempts per step. Default: the runtime's `stepMaxAttempts`, else the queue's. */
  readonly maxAttemptsPerStep?: number;
  /** Epoch ms before which step 0 stays scheduled (queue clock). */
  readonly runAt?: number;
  /** Caller-KV writes applied atomically with the step-0 enqueue (never for a duplicate). */
  readonly kvWrites?: Iterable<readonly [KvKey, Uint8Array]>;
}

export interface SubmitOutcome {
  readonly runId: string;
  /**
   * False for a duplicate of an active run with the same input. True also for a debounced
   * submission that joined an open window: `runId` then names the window's run, which carries
   * this input.
   */
  readonly newlySubmitted: boolean;
  /**
   * The queue job now carrying the run (step 0 for a new run; for a finished one, the job that
   * ended it, or '' if unknown). For a run waiting for a concurrency slot, an id of no job yet:
   * its step 0 gets a fresh one when admitted.
   */
  readonly jobId: string;
  /**
   * How the run had ended, when the id names a finished run whose outcome is still kept and the
   * runtime keeps ids for that long (`runIdReuse: 'after-retention'`); `result(runId)` gives its
   * outcome. Absent otherwise.
   */
  readonly finished?: TerminalStatus;
}

/** Every RunSpec field (add a new field's name here, or submit rejects it as unknown). */
const RUN_SPEC_FIELDS = optionNames<RunSpec>({
  runId: true,
  input: true,
  headers: true,
  priority: true,
  maxAttemptsPerStep: true,
  runAt: true,
  kvWrites: true,
  concurrency: true,
  rateLimit: true,
  debounce: true,
});

interface ValidSpec {
  readonly runId: string | undefined;
  readonly input: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
  readonly options: EnqueueOptions;
  readonly kvWrites: [Uint8Array, Uint8Array][];
  readonly flow: FlowControl | undefined;
}

export function validateSpec(spec: RunSpec, defaultAttempts: number | undefined): ValidSpec {
  // `submit()` and `submit(undefined)` are mistakes (a spec built from a missing variable), not an
  // empty spec: `submit({})` starts a run with an empty input.
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new InvalidArgumentError(`run spec must be an object (use {} for an empty input). spec=${show(spec)}`, { reason: 'invalid_spec', spec: show(spec) });
  }
  checkOptions(spec, RUN_SPEC_FIELDS, 'run spec', 'INVALID_ARGUMENT', { reason: 'invalid_spec' });
  if (spec.runId !== undefined) validateRunId(spec.runId);
  const input = spec.input ?? new Uint8Array(0);
  if (!(input instanceof Uint8Array)) throw new InvalidArgumentError(`input must be a Uint8Array. input=${show(input)}`, { reason: 'invalid_spec', field: 'input' });
  const headers = spec.headers ?? {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    throw new InvalidArgumentError(`headers must be an object of strings. headers=${show(headers)}`, { reason: 'invalid_spec', field: 'headers' });
  }
  checkUserHeaders(headers);
  const kvWrites: [Uint8Array, Uint8Array][] = [];
  if (spec.kvWrites !== undefined) {
    if (typeof (spec.kvWrites as Iterable<unknown>)[Symbol.iterator] !== 'function') {
      throw new InvalidArgumentError('kvWrites must be an iterable of [key, value] pairs (an array or a Map)', { reason: 'invalid_spec', field: 'kvWrites' });
    }
    for (const pair of spec.kvWrites) {
      if (!Array.isArray(pair) || pair.length !== 2) throw new InvalidArgumentError('kvWrites entries must be [key, value] pairs', { reason: 'invalid_spec', field: 'kvWrites' });
      const key = kvKeyBytes(pair[0]);
      checkUserKvKey(key);
      checkKvValue(key, pair[1]);
      kvWrites.push([key, pair[1]]);
    }
  }
  const options: { -readonly [K in keyof EnqueueOptions]: EnqueueOptions[K] } = {};
  if (spec.priority !== undefined) options.priority = spec.priority;
  const attempts = spec.maxAttemptsPerStep ?? defaultAttempts;
  if (attempts !== undefined) options.maxAttempts = attempts;
  if (spec.runAt !== undefined) options.runAt = spec.runAt;
  const flow = checkFlowControl(spec);
  return { runId: spec.runId, input, headers: { ...headers }, options, kvWrites, flow };
}

/** `record`: the command being applied, whose answer commits with a new run (commands/ledger.ts). */
export async function submitRun(ctx: RuntimeContext, locks: KeyedMutex, spec: RunSpec, defaultAttempts: number | undefined, record?: CommandRecord): Promise<SubmitOutcome> {
  const v = validateSpec(spec, defaultAttempts);
  const runId = v.runId ?? ctx.queue.nextJobId();
  return locks.run(runId, async () => {
    const hash = await sha256(v.input);
    const hashHex = toHex(hash);
    const entry = ctx.registry.get(runId);
    if (entry?.inputHash !== undefined) {
      if (entry.inputHash !== hashHex) throw new InputMismatchError(runId);
      return { runId, newlySubmitted: false, jobId: entry.currentJobId };
    }
    const recordBytes = await ctx.queue.kvGet(runRecordKey(runId));
    if (recordBytes !== undefined) {
      if (!equalBytes(decodeRunRecord(recordBytes).inputHash, hash)) throw new InputMismatchError(runId);
      const pointer = await ctx.queue.kvGet(stepPointerKey(runId));
      if (pointer === undefined) {
        throw corrupt(`run record without a step pointer. runId=${runId}`, { reason: 'inconsistent_run_state', runId });
      }
      const jobId = decodeStepPointer(pointer).jobId;
      if (entry) entry.inputHash = hashHex;
      return { runId, newlySubmitted: false, jobId };
    }
    if (keepsFinishedRunIds(ctx)) {
      const finished = await readFinishedRecord(ctx.queue, ctx.queueName, runId);
      if (finished !== null) {
        if (finished.inputHash !== null && !equalBytes(finished.inputHash, hash)) throw new InputMismatchError(runId);
        return { runId, newlySubmitted: false, jobId: finished.jobId ?? '', finished: finished.status };
      }
    }
    const jobId = ctx.queue.nextJobId();
    const registered = ctx.registry.submitted(runId, jobId, v.headers, hashHex);
    const run: NewRun = {
      runId,
      jobId,
      input: v.input,
      inputHash: hash,
      submittedAtMs: ctx.clock.now(),
      headers: v.headers,
      options: v.options,
      kvWrites: v.kvWrites,
      answer: (outcome) => record?.writes(outcome) ?? [],
    };
    // A function run is watched for buffered signals from before it exists (runs/signal-watch.ts).
    const watch = ctx.endingDeletes ? ctx.signalWatch : undefined;
    const watched = watch?.watch(runId) === true;
    let committed = false;
    try {
      const outcome = v.flow === undefined ? await enqueueNewRun(ctx, run) : await submitWithFlow(ctx, run, v.flow);
      // A debounced submission may join another run's window: this id then stays unused.
      committed = outcome.newlySubmitted && outcome.runId === runId;
      return outcome;
    } catch (e) {
      // The queue validates priority, attempts and runAt; report them as the spec's fields.
      if (isTaqubaError(e, 'INVALID_ARGUMENT')) throw new InvalidArgumentError(`invalid run spec: ${e.message}`, { ...e.details, reason: 'invalid_spec' });
      throw e;
    } finally {
      if (!committed) {
        ctx.registry.removeIf(runId, registered);
        if (watched) watch!.unwatch(runId);
      }
    }
  });
}
