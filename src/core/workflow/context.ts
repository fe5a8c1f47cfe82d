/** What the runtime's modules share: one object built by `WorkflowRuntime` (no entry point exports it). */
import type { Clock } from '../clock.js';
import type { LogSink } from '../logger.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { Queue } from '../queue/index.js';
import type { KeyedMutex } from '../keyed-mutex.js';
import type { MemoStore } from './steps/memo.js';
import type { RunRegistry } from './registry.js';
import type { StepRunnerObject } from './steps/step.js';
import type { TerminalHook } from './runs/terminal-hook.js';
import type { SignalWatch } from './runs/signal-watch.js';
import type { OpenTelemetryTracer } from '../tracing.js';

export interface RuntimeContext {
  readonly queue: Queue;
  readonly queueName: string;
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly memo: MemoStore;
  readonly runner: StepRunnerObject;
  readonly hook: TerminalHook;
  readonly registry: RunRegistry;
  /**
   * Serialises signal registration, delivery and timeout consumption per correlation key; shared
   * by every runtime on the queue handle (`signalLocksOf`).
   */
  readonly signalLocks: KeyedMutex;
  readonly memoRetentionMs: number | null;
  readonly stepOutputReplay: boolean;
  /** The runtime's logger (messages prefixed `[workflow] `). */
  readonly log: LogSink;
  /** `log.warn`. */
  readonly warn: (message: string, error?: unknown) => void;
  /**
   * Caller-KV keys every ending of a run also deletes, read before its settlement is built: the
   * history of a workflow function's run (functions/history.ts), unless `historyStaged` (the
   * ending's effects delete it already). Absent for a StepRunner runtime.
   */
  readonly endingDeletes?: (runId: string, historyStaged: boolean) => Promise<Uint8Array[]>;
  /**
   * Held by an ending with `endingDeletes` from reading them until its settlement committed, and by
   * a signal checking that its run is active before buffering (runs/signals.ts): no signal is
   * buffered for a run after its ending read what to delete. Shared by every runtime on the queue
   * handle (`endingLocksOf`), as run records and signals are.
   */
  readonly endingLocks: KeyedMutex;
  /** Which runs are known to have no buffered signal (runs/signal-watch.ts); shared by every runtime on the queue handle. */
  readonly signalWatch: SignalWatch;
  /**
   * The run a signal of `correlationKey` is for, when only that run, while active, may take it: on
   * a runtime of workflow functions, the run of `<runId>#<name>`. Absent for a StepRunner runtime,
   * whose signals may come before their run.
   */
  readonly signalRunOf?: (correlationKey: string) => string | undefined;
  /** The app's tracer (`tracer` option); absent: no spans. */
  readonly tracer?: OpenTelemetryTracer;
}
