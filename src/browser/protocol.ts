/**
 * Everything that crosses a boundary of the browser host, as discriminated unions on `type`:
 * the run events a page subscribes to, the host's role and info, the calls a page (or another
 * tab) makes on the runtime, and the messages the tabs of one store exchange on their
 * BroadcastChannel. Plain structured-cloneable data only: bytes are `Uint8Array`, errors are
 * `WireError` records (wire-error.ts).
 */
import type { ErrorCode, ErrorDetails } from '../core/errors.js';
import type { QueueStats } from '../core/queue/index.js';
import type { DeadStep, DurableRunState, KvKey, MemoEntry, RunDetails, RunSpec, RunTimeline, RunState, SignalOutcome, SubmitOutcome, TerminalStatus } from '../core/workflow/index.js';
import type { JobFailureReason, JobSubmitOptions } from '../core/jobs/index.js';
import type { BatchProgress, BatchStatus, FailurePolicy } from '../core/bulk/index.js';

/** Bumped when a message shape changes: tabs of different versions never talk to each other. */
export const PROTOCOL_VERSION = 6;

// ---- run events ----

/** Fields every run event carries. */
interface RunEventBase {
  readonly runId: string;
  /** The host (worker) whose runtime executes the run: the leader's `hostId`. */
  readonly executor: string;
  /** Epoch ms, from the executing runtime's clock. */
  readonly at: number;
}

/** What a step's runner decided, or `error` when it threw (or returned something invalid). */
export type StepResultKind = 'continue' | 'succeed' | 'fail' | 'cancel' | 'error';

/**
 * Live events of the runs the leader executes, emitted by the worker that executes them (never
 * synthesized by a client). Step events are reported when the runner is called and when it
 * returns, before the step's settlement commits: after a crash the same step is delivered again
 * (a new `step-started` with the same `attempt` and one more `interruptions`). `terminal` is reported once the run's terminal
 * outcome has committed. Delivery is live only: nothing is replayed to a late subscriber.
 */
export type RunEvent =
  | (RunEventBase & {
      readonly type: 'step-started';
      readonly stepNumber: number;
      /** `Step.attempt`: 1, plus one per earlier failed try; a crash or reload does not count. */
      readonly attempt: number;
      readonly maxAttempts: number;
      /** `Step.interruptions`: earlier deliveries of this step cut off by a crash, reload or closed tab. */
      readonly interruptions: number;
      readonly jobId: string;
    })
  | (RunEventBase & {
      readonly type: 'step-finished';
      readonly stepNumber: number;
      readonly attempt: number;
      readonly result: StepResultKind;
      /** The error message for `error`, the reason for `fail` / `cancel`, else null. */
      readonly error: string | null;
    })
  | (RunEventBase & {
      readonly type: 'waiting-for-signal';
      /** The step that waits (the one after the step that returned `continueOnSignal`). */
      readonly stepNumber: number;
      readonly correlationKey: string;
      readonly timeoutMs: number;
    })
  | (RunEventBase & {
      readonly type: 'retry-scheduled';
      readonly stepNumber: number;
      /** The attempt that will run next. */
      readonly nextAttempt: number;
      /** The queue's backoff before it (estimate from the queue config). */
      readonly delayMs: number;
      readonly error: string;
    })
  | (RunEventBase & {
      readonly type: 'terminal';
      readonly status: TerminalStatus;
      readonly result: Uint8Array | null;
      readonly error: string | null;
      readonly finalStep: number;
      readonly headers: Readonly<Record<string, string>>;
    });

/** The part a worker host plays for its store. */
export type HostRole = 'starting' | 'follower' | 'leader' | 'closed' | 'failed';

/** Local to one host: its role changed (never forwarded to other tabs). */
export interface RoleEvent {
  readonly type: 'role-changed';
  readonly role: HostRole;
  /** The leader's host id when known. */
  readonly leader: string | null;
  /** Why the host failed (role `failed`). */
  readonly error: WireError | null;
}

/**
 * Progress of a bulk batch the leader drives (`serveWorkflowRuntime({ bulk })`): sent when
 * finished items are recorded (at most about ten a second per batch, and always the last one,
 * `progress.finished`). Live only, like run events. Delivered to `client.onBatchProgress`
 * listeners, apart from the `HostEvent`s of `subscribe`.
 */
export interface BatchProgressEvent {
  readonly type: 'batch-progress';
  readonly batchId: string;
  /** The leader's `hostId`. */
  readonly executor: string;
  /** Epoch ms, from the leader's clock. */
  readonly at: number;
  readonly progress: BatchProgress;
}

/** What a subscription delivers. */
export type HostEvent = RunEvent | RoleEvent;

/** Everything a host's event hub and event port carry: host events and batch progress. */
export type HubEvent = HostEvent | BatchProgressEvent;

// ---- errors on the wire ----

/**
 * An error as plain data: the library's code and details survive, and the receiving side
 * rebuilds the matching class (`fromWireError`). `cause` chains are kept to a bounded depth.
 */
export interface WireError {
  readonly name: string;
  readonly message: string;
  /** Set for library errors (`TaqubaError`). */
  readonly code?: ErrorCode;
  readonly details?: ErrorDetails;
  /** Set for a `StepError`. */
  readonly stepErrorKind?: 'transient' | 'permanent';
  /**
   * Set for a `JobFailedError` with a payload (`error`) that survives a structured clone: the
   * payload itself. (The jobs client ships payloads as the job codec's bytes instead; this covers
   * a `JobFailedError` thrown anywhere else.)
   */
  readonly jobError?: unknown;
  readonly stack?: string;
  readonly cause?: WireError;
  /** A thrown non-error primitive, kept as is. */
  readonly value?: string | number | boolean | null;
}

// ---- the runtime operations ----

/** A run as the host reports it. */
export type RunView = {
  readonly runId: string;
  /**
   * Active states: `pending` (claimable), `running`, `cancelling`, `scheduled` (a delay or a
   * retry backoff), `waiting-for-signal`. Terminal states are reported only for runs whose
   * outcome the current leader saw commit; otherwise a terminated run is unknown (null).
   */
  readonly state: RunState | 'scheduled' | 'waiting-for-signal' | TerminalStatus;
  /** The step the run has reached (the final step for a terminal run). */
  readonly currentStep: number;
  /** Only for terminal states. */
  readonly result?: Uint8Array | null;
  readonly error?: string | null;
};

/** One page of active runs, in run-id order. */
export interface RunPage {
  readonly runs: readonly {
    readonly runId: string;
    readonly submittedAtMs: number;
    readonly currentStep: number | null;
    /** The stored state (null while the run's records kept moving during the read). */
    readonly state: DurableRunState | null;
  }[];
  /** Pass back as `cursor` for the next page; undefined on the last page. */
  readonly nextCursor: Uint8Array | undefined;
}

export interface ListRunsOptions {
  readonly cursor?: Uint8Array;
  /** Only runs in this state (or these states). Default: every active run. */
  readonly status?: DurableRunState | readonly DurableRunState[];
  /** Page size, default 100. */
  readonly limit?: number;
}

/** One page of caller KV entries. */
export interface KvEntryPage {
  readonly entries: readonly (readonly [Uint8Array, Uint8Array])[];
  readonly nextCursor: Uint8Array | undefined;
}

/**
 * A step job in the dead-letter space (out of attempts, or a permanent step error): the core's
 * `DeadStep` as it is, since it is plain data that crosses the worker boundary unchanged.
 */
export type DeadStepView = DeadStep;

export interface DeadStepPageOptions {
  /** Pass back the last `jobId` of a page for the next one. */
  readonly afterJobId?: string;
  /** Page size, default 50. */
  readonly limit?: number;
}

/** An active run in detail (the core's `RunDetails`: plain data, unchanged across the boundary). */
export type RunDetailsView = RunDetails;

/** A memo entry of a run (the core's `MemoEntry`). */
export type MemoEntryView = MemoEntry;

/** Live counts of one queue of the store (the core's `QueueStats`). */
export type QueueCountsView = QueueStats;

export interface KvScanPageOptions {
  readonly cursor?: Uint8Array;
  /** Page size, default 100. */
  readonly limit?: number;
}

// ---- jobs ----

/** A job submission as the leader answers it. */
export interface JobSubmission {
  /** The job id (= its run id). */
  readonly id: string;
  /** False when collapsed onto an earlier submission with the same idempotency key. */
  readonly newlySubmitted: boolean;
}

/**
 * A job's stored outcome as it crosses a boundary: output and error payload as the bytes of the
 * job's codec, so the page decodes them with the same definition (and `parse`) it submitted with.
 */
export type WireJobOutcome =
  | { readonly ok: true; readonly output: Uint8Array }
  | { readonly ok: false; readonly reason: JobFailureReason; readonly message: string; readonly error?: Uint8Array };

/** A run spec as it crosses a boundary: `kvWrites` as an array (any iterable is accepted by the client). */
export type WireRunSpec = Omit<RunSpec, 'kvWrites'> & { readonly kvWrites?: readonly (readonly [KvKey, Uint8Array])[] };

/**
 * The operations on the store's runtime that any tab may call; the leader runs them, every other
 * tab forwards them to it. One method per operation, arguments and results structured-cloneable.
 */
export interface RuntimeOperations {
  /**
   * Starts a run (idempotent on run id and input; a run id is drawn when the spec has none).
   * Durable when it resolves. Rejects with INVALID_ARGUMENT, INPUT_MISMATCH, CORRUPT_DATA,
   * CLOSED or STORE_*. A submission forwarded to a leader that goes away unanswered is sent
   * again to the next one (it carries a run id, so that is idempotent).
   */
  submit(spec: WireRunSpec): Promise<SubmitOutcome>;
  /** The run's state, or null when no run of this id is active (and its end was not seen). INVALID_ARGUMENT for a bad id. */
  status(runId: string): Promise<RunView | null>;
  /** Cancels an active run, also one an earlier leader parked (false for an unknown or finished run). CLOSED or STORE_* errors. */
  cancel(runId: string): Promise<boolean>;
  /**
   * Sends a durable signal (`delivered` or `buffered`). INVALID_ARGUMENT, CLOSED, STORE_*. Sent
   * again to the next leader when the leader went away before answering (applied once).
   */
  signal(correlationKey: string, payload: Uint8Array): Promise<SignalOutcome>;
  /** Discards a buffered signal; false when there was none. */
  clearSignal(correlationKey: string): Promise<boolean>;
  /** Active runs (those with a run record), in run-id order. */
  listRuns(options?: ListRunsOptions): Promise<RunPage>;
  /** A caller-KV value, or null. */
  kvGet(key: KvKey): Promise<Uint8Array | null>;
  /** One page of caller-KV entries under `prefix`, in key order. */
  kvScan(prefix: KvKey, options?: KvScanPageOptions): Promise<KvEntryPage>;
  /** A memo entry of a run (`scope` a step number, or `'run'` for the run memo), or null. */
  memoGet(runId: string, scope: number | 'run', key: string): Promise<Uint8Array | null>;
  /** One page of the runtime queue's dead jobs (steps out of attempts, permanent errors), oldest first. INVALID_ARGUMENT for a bad limit. */
  listDeadSteps(options?: DeadStepPageOptions): Promise<readonly DeadStepView[]>;
  /** One active run in detail (current step, its tries with timestamps, what it waits for), or null. INVALID_ARGUMENT for a bad id. */
  getRun(runId: string): Promise<RunDetailsView | null>;
  /**
   * Everything the store still holds of a run, active or ended, step by step (`runtime.getRunTimeline`):
   * kept step jobs with their tries, signals, step verdicts, memo entries, the terminal outcome.
   * INVALID_ARGUMENT for a bad id.
   */
  runTimeline(runId: string): Promise<RunTimeline>;
  /** The memo entries of a run that exist now; entries whose key is in `knownKeys` are named. INVALID_ARGUMENT for a bad id. */
  listMemo(runId: string, knownKeys?: readonly string[]): Promise<readonly MemoEntryView[]>;
  /** The signal buffered on `correlationKey` (sent before a run waited for it), or null. */
  bufferedSignal(correlationKey: string): Promise<Uint8Array | null>;
  /** Counts per state of every queue of the store, by queue name. */
  queueCounts(): Promise<readonly QueueCountsView[]>;
  /**
   * Re-enqueues a dead step of this runtime's queue with fresh attempts (its history keeps a
   * `requeued` marker), by `runtime.retryDeadJob`: a step that failed its run revives the run.
   * NOT_FOUND when no dead job of this runtime has the id; CONFLICT (`run_resubmitted`) when the
   * run id was submitted again since; CORRUPT_DATA when its payload object is unreadable.
   */
  retryDeadStep(jobId: string): Promise<void>;
  /** Deletes a dead step of this runtime's queue; false when no dead job of this runtime has the id. */
  discardDeadStep(jobId: string): Promise<boolean>;
  /**
   * Submits the job registered under `name` in the leader's worker, with `input` encoded by the
   * job's codec. Durable when it resolves. Rejects like `JobRunner.submit` (INVALID_ARGUMENT
   * `unregistered_job` / `invalid_job_input` / `invalid_spec`, INPUT_MISMATCH, CLOSED, STORE_*),
   * and with STORE_UNAVAILABLE (`leader_changed`) when a forwarded submission's leader went away
   * unanswered (not retried: without an idempotency key the id is drawn by the leader).
   */
  jobSubmit(name: string, input: Uint8Array, options?: JobSubmitOptions): Promise<JobSubmission>;
  /**
   * Waits up to `waitMs` (at most 60 s) for the job's outcome; null while it is still pending (or
   * the leader is stopping). NOT_FOUND when there is neither a run nor a stored outcome under `id`;
   * INVALID_ARGUMENT (`unregistered_job`, `invalid_run_id`); CLOSED, CORRUPT_DATA, STORE_*.
   */
  jobWait(name: string, id: string, waitMs: number): Promise<WireJobOutcome | null>;
  /** The job's stored outcome, or null (pending, running, none or swept). Errors as `jobWait`, without NOT_FOUND. */
  jobFetch(name: string, id: string): Promise<WireJobOutcome | null>;
  /** Cancels a pending or running job (`JobRunner.cancel`); false for an unknown or ended one. */
  jobCancel(id: string): Promise<boolean>;
  /**
   * Submits a bulk batch to the leader's pipeline (`serveWorkflowRuntime({ bulk })`) and starts
   * driving it there; idempotent per batch id (one is drawn when absent). Resolves with its
   * progress once its stored state is loaded; follow it with `batch-progress` events. Rejects
   * like `Bulk.submit`, and with INVALID_ARGUMENT (`bulk_not_configured`) without a pipeline.
   */
  bulkSubmit(inputs: readonly unknown[], options?: WireBatchSubmitOptions): Promise<BatchProgress>;
  /**
   * The progress of a batch the leader drives, driving a stored one again if the leader is not
   * (after a takeover or reload). NOT_FOUND (`batch_not_found`) for an unknown batch.
   */
  bulkProgress(batchId: string): Promise<BatchProgress>;
  /** The batch as the store records it (`Bulk.status`). NOT_FOUND for an unknown batch. */
  bulkStatus(batchId: string): Promise<BatchStatus>;
}

/** `BatchSubmitOptions` as they cross a boundary: item keys as an array instead of a function. */
export interface WireBatchSubmitOptions {
  readonly batchId?: string;
  /** One key per input, in order. Default `item-<index>`. */
  readonly keys?: readonly string[];
  readonly headers?: Readonly<Record<string, string>>;
  readonly failurePolicy?: FailurePolicy;
}

export type OperationName = keyof RuntimeOperations;

/**
 * One call of an operation, as data. A write operation (`COMMAND_ARITY`) carries a command id,
 * kept with its effect by the leader's runtime: sent again to a new leader, it applies once.
 */
export type OperationCall = { [M in OperationName]: { readonly method: M; readonly args: Parameters<RuntimeOperations[M]>; readonly commandId?: string } }[OperationName];

/** The write operations applied once per command id, with the number of arguments before the command options. */
export const COMMAND_ARITY: Readonly<Partial<Record<OperationName, number>>> = { submit: 1, cancel: 1, signal: 2, retryDeadStep: 1 };

/** Operations that may be sent again to a new leader when the old one went away unanswered. */
export const RETRYABLE_OPERATIONS: ReadonlySet<OperationName> = new Set<OperationName>([
  // Applied once per command id (and a forwarded submission always carries a run id too).
  'submit',
  'cancel',
  'signal',
  'retryDeadStep',
  'status',
  'clearSignal',
  'listRuns',
  'kvGet',
  'kvScan',
  'memoGet',
  'listDeadSteps',
  'getRun',
  'runTimeline',
  'listMemo',
  'bufferedSignal',
  'queueCounts',
  // Deleting a deleted dead job answers false.
  'discardDeadStep',
  // A wait is read-only: sent again to the next leader, it waits there.
  'jobWait',
  'jobFetch',
  'jobCancel',
  // A forwarded batch submission carries a batch id, so sending it again is idempotent.
  'bulkSubmit',
  'bulkProgress',
  'bulkStatus',
]);

// ---- tab coordination (BroadcastChannel) ----

/** Outcome of a forwarded call. */
export type CallResult = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: WireError };

/**
 * Messages on the store's BroadcastChannel. Every message names its sender (`from`); requests
 * and responses also name their addressee, and the others ignore them.
 */
export type TabMessage =
  /** A host that does not know the leader asks for it. */
  | { readonly type: 'hello'; readonly from: string }
  /** The leader announces itself: on taking the lock (once its runtime is open) and to answer `hello`. */
  | { readonly type: 'leader'; readonly from: string }
  /** The leader is stopping; requests it has not answered will not be answered. */
  | { readonly type: 'resign'; readonly from: string }
  | { readonly type: 'request'; readonly from: string; readonly to: string; readonly id: string; readonly call: OperationCall }
  | { readonly type: 'response'; readonly from: string; readonly to: string; readonly id: string; readonly result: CallResult }
  /** A run event, broadcast by the leader. */
  | { readonly type: 'event'; readonly from: string; readonly event: RunEvent | BatchProgressEvent };

/** The envelope on the channel: tabs drop messages of another protocol version. */
export interface TabEnvelope {
  readonly v: number;
  readonly message: TabMessage;
}

/** What `info()` reports about one host. */
export interface HostInfo {
  /** This host's id (the `executor` of the events it emits while leader). */
  readonly hostId: string;
  readonly name: string;
  readonly store: 'indexeddb' | 'opfs' | 'custom';
  readonly role: HostRole;
  readonly leader: string | null;
  /** `navigator.storage.persisted()` as seen by the worker; null where unavailable. */
  readonly persisted: boolean | null;
  readonly error: WireError | null;
}
