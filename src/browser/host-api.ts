/**
 * The narrow facade a worker exposes through Comlink. Its type is the contract: the page client
 * (client.ts) is derived from `HostApi`, not written by hand. Every method takes and returns
 * structured-cloneable data; large byte results are transferred rather than copied.
 */
import { transfer } from 'comlink';
import type { KvKey, SignalOutcome, SubmitOutcome } from '../core/workflow/index.js';
import type {
  DeadStepPageOptions,
  DeadStepView,
  HostInfo,
  KvEntryPage,
  KvScanPageOptions,
  ListRunsOptions,
  OperationCall,
  RunPage,
  RunView,
  RuntimeOperations,
  WireRunSpec,
} from './protocol.js';
import { withTransfer } from './transfer-handlers.js';
import type { WorkflowHost } from './workflow-host.js';

/**
 * What a page can ask its worker. The runtime operations are served by the store's leader,
 * whichever tab's worker that is; `info`, `openEvents` and `close` concern this worker.
 */
export interface HostApi extends RuntimeOperations {
  /**
   * Starts a run (idempotent on run id and input; a run id is drawn when the spec has none).
   * Durable when it resolves. Rejects with INVALID_ARGUMENT, INPUT_MISMATCH, CORRUPT_DATA,
   * CLOSED or STORE_*. A submission forwarded to a leader that goes away unanswered is sent
   * again to the next one (it carries a run id, so that is idempotent).
   */
  submit(spec: WireRunSpec): Promise<SubmitOutcome>;
  /** The run's state, or null when no run of this id is active (and its end was not seen). INVALID_ARGUMENT for a bad id. */
  status(runId: string): Promise<RunView | null>;
  /** Cancels an active run the leader knows (false otherwise). CLOSED or STORE_* errors. */
  cancel(runId: string): Promise<boolean>;
  /**
   * Sends a durable signal (`delivered` or `buffered`). INVALID_ARGUMENT, CLOSED, STORE_*, and
   * STORE_UNAVAILABLE (`details.reason` `leader_changed`) when the leader went away before
   * answering: it may or may not have been applied.
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
  /** One page of the runtime queue's dead jobs (steps out of attempts, permanent errors), oldest first. */
  listDeadSteps(options?: DeadStepPageOptions): Promise<readonly DeadStepView[]>;
  /** This worker's host: id, role, leader, persistence. */
  info(): Promise<HostInfo>;
  /** A port that receives every `HostEvent` from now on. Post `{ type: 'close' }` to stop it. */
  openEvents(): MessagePort;
  /** Leaves the store (a leader hands over gracefully). Later calls reject with CLOSED. */
  close(): Promise<void>;
}

/** The facade over `host`, ready for `Comlink.expose`. */
export function createHostApi(host: WorkflowHost): HostApi {
  const run = async <T>(call: OperationCall): Promise<T> => withTransfer((await host.call(call)) as T);
  return {
    submit: (spec) => run({ method: 'submit', args: [spec] }),
    status: (runId) => run({ method: 'status', args: [runId] }),
    cancel: (runId) => run({ method: 'cancel', args: [runId] }),
    signal: (correlationKey, payload) => run({ method: 'signal', args: [correlationKey, payload] }),
    clearSignal: (correlationKey) => run({ method: 'clearSignal', args: [correlationKey] }),
    listRuns: (options) => run({ method: 'listRuns', args: [options] }),
    kvGet: (key) => run({ method: 'kvGet', args: [key] }),
    kvScan: (prefix, options) => run({ method: 'kvScan', args: [prefix, options] }),
    memoGet: (runId, scope, key) => run({ method: 'memoGet', args: [runId, scope, key] }),
    listDeadSteps: (options) => run({ method: 'listDeadSteps', args: [options] }),
    info: () => host.info(),
    openEvents: () => {
      const port = host.openEventPort();
      return transfer(port, [port]);
    },
    close: () => host.close(),
  };
}
