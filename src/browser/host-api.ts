/**
 * The narrow facade a worker exposes through Comlink. Its type is the contract: the page client
 * (client.ts) is derived from `HostApi`, not written by hand. Every method takes and returns
 * structured-cloneable data; large byte results are transferred rather than copied.
 */
import { transfer } from 'comlink';
import { OPERATION_NAMES } from '../core/operations/operation-list.js';
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

/** The facade over `host`, ready for `Comlink.expose`: one method per operation of the core's list, carried to the leader as an `OperationCall`. */
export function createHostApi(host: WorkflowHost): HostApi {
  const run = async (call: OperationCall): Promise<unknown> => withTransfer(await host.call(call));
  const operations = Object.fromEntries(OPERATION_NAMES.map((method) => [method, (...args: unknown[]) => run({ method, args } as OperationCall)])) as unknown as RuntimeOperations;
  return {
    ...operations,
    info: () => host.info(),
    openEvents: () => {
      const port = host.openEventPort();
      return transfer(port, [port]);
    },
    close: () => host.close(),
  };
}
