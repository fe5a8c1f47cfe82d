/**
 * `taquba-workflow/browser`: the page side of the browser host.
 *
 * The runtime runs in a dedicated Web Worker (`serveWorkflowRuntime` from
 * `taquba-workflow/browser/worker`), over IndexedDB or OPFS; the page holds a typed client from
 * `connect(worker)`. Each tab starts its own worker; a Web Lock named after the store makes
 * exactly one of them the leader (the store's single writer, executing every step), and the
 * others forward their calls to it over a BroadcastChannel. When the leader's tab closes or
 * crashes, a waiting tab takes the lock, opens the store (fencing the old writer) and carries on:
 * in-flight steps are redelivered and memoized work is not redone.
 *
 * Errors cross the boundary as the library's own classes with their codes (`isTaqubaError(e,
 * 'INPUT_MISMATCH')` holds in the page); bytes cross as `Uint8Array` (large ones transferred);
 * run events (step started/finished, waiting for a signal, retry scheduled, a workflow function's
 * `ctx` calls, terminal) come from the leader's worker as they happen.
 *
 * Importing this module touches no browser API.
 */
export { connect } from './client.js';
// The sibling of `connect` for a store served over HTTP (`serveHttp` from `taquba-workflow/http`): the same typed operations.
export { connectHttp } from '../http/client/connect-http.js';
export type { ConnectHttpOptions, HttpEventFilter, HttpWorkflowClient } from '../http/client/connect-http.js';
export type { HttpRunEvent, RunStatusEvent, TerminalRunEvent } from '../http/wire.js';
export type { WorkflowClient, ClientOperations, ConnectOptions, CloseOptions, EventFilter } from './client.js';
export type { HostApi } from './host-api.js';
export type { JobsClient } from './job-client.js';
export { JobHandle } from '../core/jobs/index.js';
export type { RemoteStartOptions, RemoteWorkflowRun } from './workflow-client.js';
export type { HandedOffRun, HandOffBackend, HandOffOptions } from './hand-off.js';
export { callValue } from '../core/workflow/functions/calls.js';
export type { FunctionCall, FunctionCallKind, FunctionCallStatus, StepFailure } from '../core/workflow/index.js';
export type { PayloadError } from '../core/queue/index.js';
export type { BatchProgressEvent, WireBatchSubmitOptions } from './protocol.js';
export type {
  DeadStepPageOptions,
  DeadStepView,
  HostEvent,
  HostInfo,
  HostRole,
  JobSubmission,
  KvEntryPage,
  KvScanPageOptions,
  ListRunsOptions,
  RoleEvent,
  RunEvent,
  RunPage,
  RunView,
  StepResultKind,
  WireError,
  WireJobOutcome,
} from './protocol.js';
export type { MemoEntryView, QueueCountsView, RunDetailsView, ScheduleView } from './protocol.js';
export type { ListMovedRunsOptions, MovedRunPage, MovedRunView, WireExportRunOptions } from '../core/operations/operations.js';
export { registerTransferHandlers, TRANSFER_THRESHOLD_BYTES } from './transfer-handlers.js';
export { fromWireError, toWireError } from './wire-error.js';
