/**
 * Everything that crosses a boundary of the browser host, as discriminated unions on `type`:
 * the run events a page subscribes to, the host's role and info, the calls a page (or another
 * tab) makes on the runtime, and the messages the tabs of one store exchange on their
 * BroadcastChannel. Plain structured-cloneable data only: bytes are `Uint8Array`, errors are
 * `WireError` records (wire-error.ts).
 */
import type { ErrorCode, ErrorDetails } from '../core/errors.js';
import type { FunctionCall, TerminalStatus } from '../core/workflow/index.js';
import type { BatchProgress } from '../core/bulk/index.js';
import type { OperationCall } from '../core/operations/operation-list.js';

/** Bumped when a message shape changes (an operation added, too): tabs of different versions never talk to each other. */
export const PROTOCOL_VERSION = 8;

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
      /**
       * A workflow function's run recorded a `ctx` call, or one changed: a step's value or
       * failure, a failed attempt it retries (`retrying`, with `attempts` and the next attempt's
       * time), a sleep begun (`sleeping`) or over (`done`), a signal wait begun (`waiting`) or
       * answered (`done`, `timed-out`), a child invoked or ended, a drawn now/random/uuid. `call`
       * is the shape of the run timeline's calls; `callValue(call)` decodes its value.
       */
      readonly type: 'function-call';
      /** The execution (underlying step) that recorded it. */
      readonly stepNumber: number;
      readonly call: FunctionCall;
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

// The operations and their data types are the core's (src/core/operations): plain data that any
// carrier takes across a boundary. Re-exported here, where the browser host's wire types live.
export type {
  DeadStepPageOptions,
  DeadStepView,
  FinishedRunPage,
  FinishedRunView,
  JobSubmission,
  KvEntryPage,
  KvScanPageOptions,
  ListFinishedRunsOptions,
  ListRunsOptions,
  MemoEntryView,
  OperationName,
  QueueCountsView,
  RunDetailsView,
  RunPage,
  RunView,
  RuntimeOperations,
  ScheduleView,
  WireBatchSubmitOptions,
  WireJobOutcome,
  WireRunSpec,
} from '../core/operations/operations.js';
export type { OperationCall } from '../core/operations/operation-list.js';

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
  /**
   * The workflow functions this worker registers (`serveWorkflowRuntime({ workflows })`), which
   * every tab's worker, the leader's too, runs alike; null for a worker serving a `runner`.
   */
  readonly workflows: readonly { readonly name: string; readonly version: number }[] | null;
}
