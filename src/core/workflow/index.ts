/**
 * Layer 4: the workflow runtime on the queue.
 *
 * Owns: runs as chains of step jobs (`WorkflowRuntime`, `StepRunner`, `Step`, `StepOutcome`,
 * `Trigger`, `StepError`), idempotent submission with a durable run record, external
 * cancellation, durable signals, caller-KV effects committed with step settlements, the memo
 * (per step and per run, content-addressed helpers), opt-in step-output replay, memo retention
 * with terminal markers, dead-step reconciliation, and terminal notifications delivered as queue
 * jobs to a `TerminalHook`; run queries from the durable records (`listRuns`, `getRun`,
 * `listDeadSteps`, inspection.ts), on the runtime and on a read-only `WorkflowReader` beside a
 * live writer; finished runs kept readable for `outcomeRetentionMs` (finished-runs.ts, `result`).
 *
 * Durable state: caller KV under `workflow/` (run records, step pointers, signal state, terminal
 * markers, finished-run records and their retention index) and memo objects under the memo prefix (memo entries and replay records, each sealed
 * with a length and a CRC-32C; a corrupt one is logged with its key and treated as absent); see
 * keys.ts for the layout.
 *
 * Errors (all `TaqubaError`): INVALID_ARGUMENT (bad run id, spec, reserved header or KV key,
 * effect conflicts, sealed handles, unserializable content keys; `details.reason` says which),
 * INVALID_CONFIG (runtime options), INPUT_MISMATCH (`InputMismatchError`), CORRUPT_DATA
 * (inconsistent or undecodable runtime records), NOT_FOUND / TIMEOUT / CANCELLED (`result`), and
 * the queue's CLOSED / FENCED / STORE_*.
 *
 * Never: read ambient time (every timestamp comes from the runtime clock, by default the
 * queue's), import a platform API, or apply a step's effects without its settlement.
 */
export { WorkflowRuntime, type RunnerHandle } from './runtime.js';
export { defineWorkflow, type AnyWorkflow, type Workflow, type WorkflowDefinition, type WorkflowInput, type WorkflowOutput, type WorkflowSet } from './functions/define.js';
export type { InvokeOptions, SignalResult, StepAttempt, WaitForSignalOptions, WorkflowContext, WorkflowLog } from './functions/context.js';
export type { StepBackoff, StepOptions } from './functions/step-options.js';
export { WorkflowRun, type StartOptions } from './functions/workflow-run.js';
export { NonDeterminismError, RunFailedError, StepFailedError } from './functions/errors.js';
export { DEFAULT_OUTCOME_RETENTION_MS, type WorkflowRuntimeOptions } from './runtime-options.js';
export { isFinishedRun, type FinishedReadOptions, type FinishedRun, type FinishedRunListOptions, type FinishedRunListPage } from './history/finished-runs.js';
export type { RunResultOptions } from './runs/run-result.js';
export type { RunSpec, SubmitOutcome } from './runs/submit.js';
export type { ConcurrencyLimit, Debounce, FlowControl, RateLimit } from './flow/flow-options.js';
export type { FlowKey, WorkflowFlowDefaults } from './functions/flow-defaults.js';
export type { RunIdReuse } from './runtime-options.js';
export type { RunState, RunStatus } from './registry.js';
export type { SignalOutcome } from './runs/signals.js';
export type {
  DeadStep,
  DeadStepListOptions,
  DurableRunState,
  RunDetails,
  RunListOptions,
  RunListPage,
  RunSummary,
  RunWait,
  WorkflowReadSource,
} from './history/inspection.js';
export { WorkflowReader, type WorkflowReaderOptions } from './history/workflow-reader.js';
export { describeRunArchive, RUN_ARCHIVE_FORMAT_VERSION, type RunArchiveSummary } from './archive/archive-format.js';
export type { ExportRunOptions } from './archive/export-run.js';
export type { ImportRunOptions, ImportRunOutcome } from './archive/import-run.js';
export { RuntimeClient, type RuntimeClientOptions } from './commands/runtime-client.js';
export type { CommandOptions } from './commands/ledger.js';
export type { DeadStepRetry } from './steps/dead-step-retry.js';
export {
  getRunTimeline,
  type RunTimeline,
  type RunTimelineOptions,
  type RunTimelineSource,
  type TimelineJob,
  type TimelineMemoEntry,
  type TimelineSignal,
  type TimelineStep,
  type TimelineStepOutcome,
  type TimelineTerminal,
} from './history/run-timeline.js';
export type { FunctionTimeline } from './history/function-timeline.js';
export type { FunctionCall, FunctionCallKind, FunctionCallStatus, StepFailure } from './functions/calls.js';
export { createRunIdGenerator } from './runs/run-ids.js';
export { detachedStep, KvReadHandle, type DetachedStepInit, type Step, type StepRunner, type StepRunnerFunction, type StepRunnerObject } from './steps/step.js';
export { StepOutcome, Trigger } from './steps/outcome.js';
export { StepError, type StepErrorKind } from './steps/step-error.js';
export { EffectsHandle, TerminalEffects, type KvKey } from './steps/effects-handle.js';
export { Memo, MemoStore, type MemoEntry, type MemoizedOptions } from './steps/memo.js';
export { NoopTerminalHook, type RunOutcome, type TerminalHook, type TerminalStatus } from './runs/terminal-hook.js';
export { InputMismatchError } from './errors.js';
export { remainingDelay } from './steps/replay.js';
export { parseTerminalMarkerKey, terminalMarkerKey, TERMINALS_PREFIX } from './keys.js';
export {
  HEADER_RUN_ID,
  HEADER_STEP,
  HEADER_TERMINAL,
  HEADER_SIGNAL_WAIT,
  HEADER_SIGNAL_DELIVERED,
  RESERVED_HEADER_PREFIX,
  RESERVED_KV_PREFIX,
  MAX_RUN_ID_LEN,
  DEFAULT_QUEUE_NAME,
  DEFAULT_MEMO_PREFIX,
} from './constants.js';
