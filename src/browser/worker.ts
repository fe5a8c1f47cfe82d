/**
 * `taquba-workflow/browser/worker`: the worker-side entry of the browser host.
 *
 * The app's worker module registers its workflow functions (`workflows: [...]`, from
 * `defineWorkflow`) or builds its `StepRunner` (`runner`), plus any terminal hook, and calls
 * `serveWorkflowRuntime` once; the page talks to it with `connect(worker)` from
 * `taquba-workflow/browser`. Open one such worker per tab: the workers of all tabs agree through
 * a Web Lock on which one runs the runtime (the store's single writer), and the others forward
 * to it, so every tab can submit, signal, cancel and watch runs.
 */
import { expose, type Endpoint } from 'comlink';
import { checkOptions, optionNames } from '../core/options.js';
import { createHostApi } from './host-api.js';
import type { HostEvent, HostInfo, HostRole } from './protocol.js';
import { registerTransferHandlers } from './transfer-handlers.js';
import { WorkflowHost, type WorkflowHostOptions } from './workflow-host.js';

/** `WorkflowHostOptions` and where to expose the host API. */
export type ServeWorkflowRuntimeOptions = WorkflowHostOptions & {
  /** Where to expose the host API. Default: the worker's global scope (`self`). */
  readonly endpoint?: Endpoint;
};

/** The worker's handle on its host. */
export interface WorkflowHostHandle {
  readonly hostId: string;
  readonly role: HostRole;
  info(): Promise<HostInfo>;
  /** Subscribes to this host's events inside the worker; returns the unsubscribe function. */
  listen(listener: (event: HostEvent) => void): () => void;
  /** Leaves the store gracefully (as the page's `client.close()` does). */
  close(): Promise<void>;
}

/**
 * Serves the workflow runtime of one store from this worker: exposes the host API to the page
 * at once, then queues for the store's lock and, once it holds it, opens the store and runs the
 * runtime (see WorkflowHost for the leadership protocol). Throws INVALID_CONFIG synchronously
 * for bad options (among them neither or both of `runner` and `workflows`); later failures (UNSUPPORTED_PLATFORM, STORE_*, CORRUPT_DATA, FENCED) show up
 * as role `failed` in `info()` and in a `role-changed` event, and reject the page's calls.
 * @example
 * // app-worker.ts, started with new Worker(new URL('./app-worker.ts', import.meta.url), { type: 'module' })
 * import { serveWorkflowRuntime } from 'taquba-workflow/browser/worker';
 * import { review } from './workflows.js'; // defineWorkflow values, imported by the page too
 * serveWorkflowRuntime({ store: 'opfs', name: 'my-app', workflows: [review] });
 * // or, with the low-level API:
 * import { StepOutcome } from 'taquba-workflow';
 * serveWorkflowRuntime({ store: 'opfs', name: 'my-app', runner: async (step) => StepOutcome.succeed(step.payload), jobs: [resizeImage] });
 */
/** Every ServeWorkflowRuntimeOptions name; adding an option, add its name here (the compiler insists). */
const SERVE_OPTION_NAMES = optionNames<ServeWorkflowRuntimeOptions>({
  store: true, name: true, runner: true, workflows: true, jobs: true, jobRunnerOptions: true, terminalHook: true,
  path: true, queueOptions: true, runtimeOptions: true, hostId: true, endpoint: true,
  bulk: true, schedules: true, cronOptions: true,
});

export function serveWorkflowRuntime(options: ServeWorkflowRuntimeOptions): WorkflowHostHandle {
  checkOptions(options ?? null, SERVE_OPTION_NAMES, 'serveWorkflowRuntime');
  registerTransferHandlers();
  const host = new WorkflowHost(options);
  expose(createHostApi(host), options.endpoint ?? (globalThis as unknown as Endpoint));
  host.start();
  return {
    hostId: host.hostId,
    get role() {
      return host.currentRole;
    },
    info: () => host.info(),
    listen: (listener) => host.listen(listener),
    close: () => host.close(),
  };
}

export type { WorkflowHostOptions, WorkflowHostSettings, HostRunner, HostStore, HostJob } from './workflow-host.js';
export type { HostBulk } from '../core/operations/local-bulk-operations.js';
export type { HostEvent, HostInfo, HostRole, RunEvent, RoleEvent, StepResultKind } from './protocol.js';
export type { BatchProgressEvent } from './protocol.js';
