/**
 * What a runner implements (`StepRunner`) and what it receives for each delivery (`Step`).
 *
 * A step is delivered at least once: a crash, a reload or an expired lease delivers it again (a
 * crash or reload counted in `interruptions`, an expired lease in `attempt`), so `runStep` must be
 * idempotent per (run id, step number). Expensive or
 * non-idempotent work goes through `step.memo`; the durable channel to the next step is the
 * payload of `StepOutcome.continue*`.
 */
import { InvalidArgumentError } from '../../errors.js';
import { MemoryObjectStore } from '../../objects/memory-store.js';
import { LeaseHandle, type Queue } from '../../queue/index.js';
import { EffectsHandle, type KvKey } from './effects-handle.js';
import { show } from '../../show.js';
import { kvKeyBytes } from '../validation.js';
import { MemoStore, type Memo } from './memo.js';
import type { StepOutcome } from './outcome.js';

/** A `StepRunner` as a function: `async (step) => StepOutcome.succeed(step.payload)`. */
export type StepRunnerFunction = (step: Step) => Promise<StepOutcome>;

/** A `StepRunner` as an object (a class instance, say); `runStep` is called on it. */
export interface StepRunnerObject {
  runStep(step: Step): Promise<StepOutcome>;
}

/**
 * Per-step logic: bytes in, a `StepOutcome` out; a function or an object with `runStep`. Throw a
 * `StepError` for infrastructure failures (any other throw counts as a transient `StepError`).
 */
export type StepRunner = StepRunnerFunction | StepRunnerObject;

/**
 * @internal Either form of `StepRunner` as an object (a function becomes `{ runStep: fn }`, an
 * object is kept, so `runStep` still sees it as `this`). Throws INVALID_ARGUMENT (reason
 * `invalid_runner`) for anything else.
 */
export function asStepRunnerObject(runner: unknown): StepRunnerObject {
  if (typeof runner === 'function') return { runStep: runner as StepRunnerFunction };
  if (typeof runner === 'object' && runner !== null && typeof (runner as { runStep?: unknown }).runStep === 'function') return runner as StepRunnerObject;
  throw new InvalidArgumentError(`runner must be a function (step) => Promise<StepOutcome> or implement runStep(step). runner=${show(runner)}`, { reason: 'invalid_runner' });
}

/** Reads of the caller KV namespace from inside a step: committed state only. */
export class KvReadHandle {
  /** @internal */
  constructor(private readonly queue: Queue | undefined) {}

  /** A handle that reads nothing (unit tests). */
  static detached(): KvReadHandle {
    return new KvReadHandle(undefined);
  }

  /**
   * The committed value of `key`, or null. Effects staged by the running step are not visible
   * until its settlement commits. Rejects with INVALID_ARGUMENT for a bad key, CLOSED, or store errors.
   */
  async get(key: KvKey): Promise<Uint8Array | null> {
    const k = kvKeyBytes(key);
    if (!this.queue) return null;
    return (await this.queue.kvGet(k)) ?? null;
  }
}

/** One delivery of one step of a run. */
export interface Step {
  readonly runId: string;
  /** Zero-based. */
  readonly stepNumber: number;
  readonly payload: Uint8Array;
  /** The submitter's headers (the reserved `workflow.` ones removed). */
  readonly headers: Readonly<Record<string, string>>;
  /** The queue job carrying this step. */
  readonly jobId: string;
  /**
   * The number of this try: 1, plus one per earlier failed try (an error, or a lease that expired
   * while the step ran). An interrupted delivery (process exit, crash, tab reload) gives its try
   * back, so a redelivery after one keeps the same `attempt`; see `interruptions`.
   */
  readonly attempt: number;
  /** The step's attempt limit: `attempt >= maxAttempts` is the last attempt. */
  readonly maxAttempts: number;
  /**
   * Earlier deliveries of this step interrupted before they settled (process exit, crash, tab
   * reload): 0 normally. Deliveries so far, this one included: `attempt + interruptions`. The
   * queue's `maxInterruptions` (default 20) dead-letters a step interrupted that often.
   */
  readonly interruptions: number;
  /**
   * The durable signal that woke this step: its payload when a signal arrived, null when the wait
   * timed out (or the step did not wait). The same on every redelivery.
   */
  readonly signalPayload: Uint8Array | null;
  /**
   * Fires when the run is cancelled from outside while this step runs. Watching it only shortens
   * the cancellation: whatever the step returns afterwards is discarded and the run settles
   * cancelled (unless the step itself returns `StepOutcome.cancel`, whose reason wins).
   */
  readonly signal: AbortSignal;
  /** Extends the queue lease for long steps (`ensureAtLeast(ms)`). */
  readonly lease: LeaseHandle;
  /** Durable memo scoped to (run, step). */
  readonly memo: Memo;
  /** Durable memo shared by all steps of the run. */
  readonly runMemo: Memo;
  /** Caller-KV writes/deletes applied with this step's settlement. */
  readonly effects: EffectsHandle;
  /** Committed reads of the caller KV namespace. */
  readonly kv: KvReadHandle;
}

/** Fields of a detached step; everything is optional. */
export interface DetachedStepInit {
  readonly runId?: string;
  readonly stepNumber?: number;
  readonly payload?: Uint8Array;
  readonly headers?: Readonly<Record<string, string>>;
  readonly jobId?: string;
  readonly attempt?: number;
  readonly maxAttempts?: number;
  readonly interruptions?: number;
  readonly signalPayload?: Uint8Array | null;
  readonly signal?: AbortSignal;
  /** Memo entries go here (default: a fresh in-memory store under `workflow-memo`). */
  readonly memoStore?: MemoStore;
}

/**
 * A step for unit-testing a runner without a runtime: the lease accepts every extension, effects
 * validate but are never applied, KV reads return null, the memo is in memory unless given.
 */
export function detachedStep(init: DetachedStepInit = {}): Step {
  const runId = init.runId ?? 'test-run';
  const stepNumber = init.stepNumber ?? 0;
  const memo = init.memoStore ?? new MemoStore(new MemoryObjectStore(), 'workflow-memo');
  return {
    runId,
    stepNumber,
    payload: init.payload ?? new Uint8Array(0),
    headers: init.headers ?? {},
    jobId: init.jobId ?? 'test-job',
    attempt: init.attempt ?? 1,
    maxAttempts: init.maxAttempts ?? 1,
    interruptions: init.interruptions ?? 0,
    signalPayload: init.signalPayload ?? null,
    signal: init.signal ?? new AbortController().signal,
    lease: LeaseHandle.detached(),
    memo: memo.newMemo(runId, stepNumber),
    runMemo: memo.newRunMemo(runId),
    effects: new EffectsHandle(),
    kv: KvReadHandle.detached(),
  };
}
