/**
 * The operations on a running store, as one interface: what a page, another tab or another
 * process may ask of the runtime that owns the store (submit, cancel, signal, status, reads of
 * active and finished runs, dead steps, memo and KV reads, schedules, jobs, bulk batches). One method per
 * operation; arguments and answers are plain data (bytes as `Uint8Array`), so any carrier (a
 * Worker boundary, a BroadcastChannel, an object inbox) can take a call to the runtime and its
 * answer back. `LocalOperations` (local-operations.ts) is the one implementation, over a
 * `WorkflowRuntime`; `OPERATIONS` (operation-list.ts) lists the operations with their kind.
 */
import type { QueueStats } from '../queue/index.js';
import type { DeadStep, DeadStepRetry, DurableRunState, FinishedRun, ImportRunOptions, ImportRunOutcome, KvKey, MemoEntry, RunDetails, RunSpec, RunState, RunStatus, RunTimeline, SignalOutcome, SubmitOutcome, TerminalStatus } from '../workflow/index.js';
import type { MovedRun } from '../workflow/archive/moved-runs.js';
import type { JobSubmitOptions } from '../jobs/index.js';
import type { JobOutcome } from '../jobs/job-records.js';
import type { BatchProgress, BatchStatus, FailurePolicy } from '../bulk/index.js';
import type { ScheduleDefinition, ScheduleInfo, ScheduleWriteResult } from '../cron/index.js';

/** A run as `status` reports it. */
export type RunView = {
  readonly runId: string;
  /**
   * Active states: `pending` (claimable), `running`, `cancelling`, `scheduled` (a delay or a
   * retry backoff), `waiting-for-signal`. Terminal states for a run whose outcome the serving
   * runtime saw commit, or whose finished-run record the store keeps (`outcomeRetentionMs`);
   * otherwise a terminated run is unknown (null).
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

/** A finished run as its record keeps it (the core's `FinishedRun`: plain data, unchanged across a boundary). */
export type FinishedRunView = FinishedRun;

/** One page of finished runs, in run-id order. */
export interface FinishedRunPage {
  readonly runs: readonly FinishedRunView[];
  /** Pass back as `cursor` for the next page; undefined on the last page. */
  readonly nextCursor: Uint8Array | undefined;
}

export interface ListFinishedRunsOptions {
  readonly cursor?: Uint8Array;
  /** Only runs that ended this way (or these ways). Default: every finished run. */
  readonly status?: TerminalStatus | readonly TerminalStatus[];
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
 * `DeadStep` as it is, since it is plain data that crosses a boundary unchanged.
 */
export type DeadStepView = DeadStep;

export interface DeadStepPageOptions {
  /** Pass back the last `jobId` of a page for the next one. */
  readonly afterJobId?: string;
  /** Page size, default 50. */
  readonly limit?: number;
}

/** An active run in detail (the core's `RunDetails`: plain data, unchanged across a boundary). */
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

/**
 * A cron schedule as the store keeps it (the core's `ScheduleInfo`: expression, zone, target,
 * next and last firing; plain data, unchanged across a boundary).
 */
export type ScheduleView = ScheduleInfo;

/** A schedule as data, for `addSchedule` / `replaceSchedule` (the core's `ScheduleDefinition`: a workflow by name, its input a value). */
export type ScheduleDefinitionView = ScheduleDefinition;

/** What `addSchedule` / `replaceSchedule` did (the core's `ScheduleWriteResult`). */
export type ScheduleWriteView = ScheduleWriteResult;

/** `ExportRunOptions` as they cross a boundary: the caller-KV keys as an array. */
export interface WireExportRunOptions {
  /** Move the run instead of copying it (`runtime.exportRun`'s `handOff`). Default false. */
  readonly handOff?: boolean;
  /** With `handOff`: where the run goes (a URL), kept in the source and answered as `movedTo`. */
  readonly to?: string;
  /** Caller-KV keys (outside `workflow/`) the run needs elsewhere. */
  readonly kvKeys?: readonly KvKey[];
}

/**
 * A run handed off from this store (the core's moved-run record): the step it left at, when, where
 * to, its archive, and when the carrier confirmed the destination imported it (null: not yet).
 */
export type MovedRunView = MovedRun;

/** One page of moved runs, in run-id order. */
export interface MovedRunPage {
  readonly runs: readonly MovedRunView[];
  readonly nextCursor: Uint8Array | undefined;
}

export interface ListMovedRunsOptions {
  readonly cursor?: Uint8Array;
  /** Page size, default 100. */
  readonly limit?: number;
  /** Only hand-offs whose delivery was not confirmed (`confirmHandOff`). Default false. */
  readonly undelivered?: boolean;
}

/** A job submission as the serving runtime answers it. */
export interface JobSubmission {
  /** The job id (= its run id). */
  readonly id: string;
  /** False when collapsed onto an earlier submission with the same idempotency key. */
  readonly newlySubmitted: boolean;
}

/**
 * A job's stored outcome as it crosses a boundary: output and error payload as the bytes of the
 * job's codec, so the caller decodes them with the same definition (and `parse`) it submitted with.
 */
export type WireJobOutcome = JobOutcome;

/** A run spec as it crosses a boundary: `kvWrites` as an array (any iterable is accepted by the page client). */
export type WireRunSpec = Omit<RunSpec, 'kvWrites'> & { readonly kvWrites?: readonly (readonly [KvKey, Uint8Array])[] };

/** `BatchSubmitOptions` as they cross a boundary: item keys as an array instead of a function. */
export interface WireBatchSubmitOptions {
  readonly batchId?: string;
  /** One key per input, in order. Default `item-<index>`. */
  readonly keys?: readonly string[];
  readonly headers?: Readonly<Record<string, string>>;
  readonly failurePolicy?: FailurePolicy;
}

/**
 * The operations on the store's runtime. In the browser the leader tab runs them and every other
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
  /**
   * The run's state, or null when no run of this id is active and its ending is unknown (neither
   * seen by the serving runtime nor kept as a finished-run record). INVALID_ARGUMENT for a bad id.
   */
  status(runId: string): Promise<RunView | null>;
  /** Cancels an active run, also one an earlier leader parked (false for an unknown or finished run). CLOSED or STORE_* errors. */
  cancel(runId: string): Promise<boolean>;
  /**
   * Sends a durable signal: `delivered`, `buffered`, or `run-not-active` (a workflow function's
   * run that is not active; nothing kept). INVALID_ARGUMENT, CLOSED, STORE_*. Sent again to the
   * next leader when the leader went away before answering (applied once).
   */
  signal(correlationKey: string, payload: Uint8Array): Promise<SignalOutcome>;
  /** Discards a buffered signal; false when there was none. */
  clearSignal(correlationKey: string): Promise<boolean>;
  /** Active runs (those with a run record), in run-id order. */
  listRuns(options?: ListRunsOptions): Promise<RunPage>;
  /**
   * Finished runs the store still keeps (`outcomeRetentionMs`, default 7 days), in run-id order:
   * how each ended, its result or error, when it ended. An id active again is not listed.
   * INVALID_ARGUMENT (`invalid_status`) for a status that is not a terminal one, or a bad limit or cursor.
   */
  listFinishedRuns(options?: ListFinishedRunsOptions): Promise<FinishedRunPage>;
  /**
   * How run `runId` ended, from its finished-run record; null while the id is active (again), and
   * when no record is kept (never finished, swept, retention off). INVALID_ARGUMENT for a bad id.
   */
  getFinishedRun(runId: string): Promise<FinishedRunView | null>;
  /**
   * Waits up to `waitMs` (at most 60 s) for the run's outcome (`runtime.result`); null while it is
   * still active (or the serving runtime is stopping): ask again. NOT_FOUND when there is neither
   * an active run nor a finished-run record under `runId`; INVALID_ARGUMENT (`invalid_run_id`,
   * `invalid_wait`); CLOSED, CORRUPT_DATA, STORE_*.
   */
  runWait(runId: string, waitMs: number): Promise<FinishedRunView | null>;
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
   * The cron schedules in the store, in name order, with their next and last firing (whether or
   * not the serving host fires them: it does with `schedules`). CORRUPT_DATA for an undecodable
   * schedule record, CLOSED, STORE_*.
   */
  listSchedules(): Promise<readonly ScheduleView[]>;
  /**
   * Adds a schedule whose firings start a workflow function of the serving host (named in
   * `definition`), stored like a declared one (it survives restarts) and marked `viaOperation`:
   * the host's declared list never deletes it, but a schedule of the same name declared in code
   * replaces it at the host's next start. Adding it again as stored answers `unchanged`. A
   * command: applied once per command id. Rejects with CONFLICT (`duplicate_schedule`: stored
   * with another definition; `replaceSchedule` changes it), INVALID_ARGUMENT
   * (`invalid_cron_expression`, `invalid_timezone`, `invalid_schedule_name`, `invalid_schedule`,
   * `unknown_workflow`, `unstorable_input`, `reserved_header`; `cron_not_configured` on a host
   * without schedules), CLOSED, STORE_*.
   */
  addSchedule(definition: ScheduleDefinitionView): Promise<ScheduleWriteView>;
  /**
   * `addSchedule`, replacing a schedule stored under the name with another definition (keeping its
   * recorded next firing when the expression and zone are unchanged). Errors as `addSchedule`,
   * without the CONFLICT.
   */
  replaceSchedule(definition: ScheduleDefinitionView): Promise<ScheduleWriteView>;
  /**
   * Deletes a schedule (whoever defined it; one still declared in code comes back at the host's
   * next start): no firing after this resolves. False when there was none. A command: applied
   * once per command id (a resend after the name was added again deletes nothing).
   * INVALID_ARGUMENT (`invalid_schedule_name`, `cron_not_configured`), CLOSED, STORE_*.
   */
  removeSchedule(name: string): Promise<boolean>;
  /**
   * Re-enqueues a dead step of this runtime's queue with fresh attempts (its history keeps a
   * `requeued` marker), by `runtime.retryDeadStep`: a step that failed its run revives the run.
   * Resolves with what was requeued. NOT_FOUND when no dead job of this runtime has the id;
   * CONFLICT (`run_resubmitted`) when the run id was submitted again since; CORRUPT_DATA when its
   * payload object is unreadable.
   */
  retryDeadStep(jobId: string): Promise<DeadStepRetry>;
  /** Deletes a dead step of this runtime's queue; false when no dead job of this runtime has the id. */
  discardDeadStep(jobId: string): Promise<boolean>;
  /**
   * The run as one portable archive (`runtime.exportRun`, docs/rfcs/0004-run-archive.md): a copy,
   * or with `handOff` a move (this store stops running it in the transaction that takes its step
   * out; only between steps). Asked again after a lost answer, a hand-off answers the same archive.
   * NOT_FOUND (`run_not_found`, `run_moved`), CONFLICT (`step_running`, `step_dead`, `child_run`,
   * `pending_children`, `run_moving`, `run_queued`), INVALID_ARGUMENT, CORRUPT_DATA, CLOSED, STORE_*.
   */
  exportRun(runId: string, options?: WireExportRunOptions): Promise<Uint8Array>;
  /**
   * Continues an exported run here (`runtime.importRun`); importing an archive again answers the
   * first import (`newlyImported` false). CORRUPT_DATA (a damaged archive), INVALID_ARGUMENT
   * (`archive_version`, `archive_kind`), ALREADY_EXISTS (`run_exists`, `run_id_kept`), CONFLICT
   * (`archive_imported`, `signal_key_in_use`), CLOSED, STORE_*.
   */
  importRun(archive: Uint8Array, options?: ImportRunOptions): Promise<ImportRunOutcome>;
  /** The runs handed off from this store, in run-id order (`undelivered`: those whose delivery was not confirmed). INVALID_ARGUMENT for a bad limit or cursor; CORRUPT_DATA. */
  listMovedRuns(options?: ListMovedRunsOptions): Promise<MovedRunPage>;
  /**
   * Records that the hand-off of `runId` with archive `archiveId` reached its destination (the
   * carrier saw the import answered): true when the run's moved record says so now (also when it
   * did already), false when no moved record of that archive is here. INVALID_ARGUMENT for a bad id.
   */
  confirmHandOff(runId: string, archiveId: string): Promise<boolean>;
  /**
   * Submits the job registered under `name` with the serving runtime, with `input` encoded by the
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
  /** The job's run status while it is active (`JobRunner`'s `readStatus`), else null. INVALID_ARGUMENT (`invalid_run_id`), CLOSED, STORE_*. */
  jobStatus(id: string): Promise<RunStatus | null>;
  /** Cancels a pending or running job (`JobRunner.cancel`); false for an unknown or ended one. */
  jobCancel(id: string): Promise<boolean>;
  /**
   * Submits a bulk batch to the serving pipeline (`serveWorkflowRuntime({ bulk })`) and starts
   * driving it there; idempotent per batch id (one is drawn when absent). Resolves with its
   * progress once its stored state is loaded; follow it with `batch-progress` events. Rejects
   * like `Bulk.submit`, and with INVALID_ARGUMENT (`bulk_not_configured`) without a pipeline.
   */
  bulkSubmit(inputs: readonly unknown[], options?: WireBatchSubmitOptions): Promise<BatchProgress>;
  /**
   * The progress of a batch the serving runtime drives, driving a stored one again if it is not
   * (after a takeover or reload). NOT_FOUND (`batch_not_found`) for an unknown batch.
   */
  bulkProgress(batchId: string): Promise<BatchProgress>;
  /** The batch as the store records it (`Bulk.status`). NOT_FOUND for an unknown batch. */
  bulkStatus(batchId: string): Promise<BatchStatus>;
}

export type OperationName = keyof RuntimeOperations;
