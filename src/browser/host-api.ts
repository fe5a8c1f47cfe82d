/**
 * The narrow facade a worker exposes through Comlink. Its type is the contract: the page client
 * (client.ts) is derived from `HostApi`, not written by hand. Every method takes and returns
 * structured-cloneable data; large byte results are transferred rather than copied.
 */
import { transfer } from 'comlink';
import type { HostInfo, OperationCall, RuntimeOperations } from './protocol.js';
import { withTransfer } from './transfer-handlers.js';
import type { WorkflowHost } from './workflow-host.js';

/**
 * What a page can ask its worker. The runtime operations are served by the store's leader,
 * whichever tab's worker that is; `info`, `openEvents` and `close` concern this worker.
 */
export interface HostApi extends RuntimeOperations {
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
    getRun: (runId) => run({ method: 'getRun', args: [runId] }),
    runTimeline: (runId) => run({ method: 'runTimeline', args: [runId] }),
    listMemo: (runId, knownKeys) => run({ method: 'listMemo', args: [runId, knownKeys] }),
    bufferedSignal: (correlationKey) => run({ method: 'bufferedSignal', args: [correlationKey] }),
    queueCounts: () => run({ method: 'queueCounts', args: [] }),
    retryDeadStep: (jobId) => run({ method: 'retryDeadStep', args: [jobId] }),
    discardDeadStep: (jobId) => run({ method: 'discardDeadStep', args: [jobId] }),
    jobSubmit: (name, input, options) => run({ method: 'jobSubmit', args: [name, input, options] }),
    jobWait: (name, id, waitMs) => run({ method: 'jobWait', args: [name, id, waitMs] }),
    jobFetch: (name, id) => run({ method: 'jobFetch', args: [name, id] }),
    jobCancel: (id) => run({ method: 'jobCancel', args: [id] }),
    bulkSubmit: (inputs, options) => run({ method: 'bulkSubmit', args: [inputs, options] }),
    bulkProgress: (batchId) => run({ method: 'bulkProgress', args: [batchId] }),
    bulkStatus: (batchId) => run({ method: 'bulkStatus', args: [batchId] }),
    info: () => host.info(),
    openEvents: () => {
      const port = host.openEventPort();
      return transfer(port, [port]);
    },
    close: () => host.close(),
  };
}
