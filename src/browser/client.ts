/**
 * The page's client of a worker host. Its type is derived from the worker's facade (`HostApi`):
 * every runtime operation becomes a promise-returning method with the same arguments, plus event
 * subscription, the persistence answer and `close`.
 */
import { pushStream } from '../core/push-stream.js';
import { transfer, wrap, type Remote } from 'comlink';
import { ClosedError } from '../core/errors.js';
import type { RunSpec, SignalOutcome, SubmitOutcome, Workflow } from '../core/workflow/index.js';
import type { HostApi } from './host-api.js';
import { createJobsClient, type JobsClient } from './job-client.js';
import { awaitInChunks, WAIT_CHUNK_MS } from './chunked-wait.js';
import type { BatchProgressEvent, FinishedRunView, HostEvent, HubEvent, WireJobOutcome } from './protocol.js';
import { listedOperations, toWireSpec, type EventFilter, type Promised, type RemoteOperations } from './remote-operations.js';
import { registerTransferHandlers, TRANSFER_THRESHOLD_BYTES } from './transfer-handlers.js';
import { createWorkflowClient, type RemoteStartOptions, type RemoteWorkflowRun } from './workflow-client.js';
import { createHandOffs, type HandedOffRun, type HandOffBackend, type HandOffOptions } from './hand-off.js';

export interface ConnectOptions {
  /**
   * Ask the browser to keep this origin's storage under pressure (`navigator.storage.persist()`)
   * and report the answer as `client.persistence`. Default true.
   */
  readonly persist?: boolean;
  /**
   * Transfer the buffers of large byte arguments (run input, KV writes, signal payloads) to the
   * worker instead of copying them. The caller's arrays are left detached (empty). Default false.
   */
  readonly transferArguments?: boolean;
}

export interface CloseOptions {
  /** Terminate the worker once its host has closed (or the wait timed out). Default true. */
  readonly terminate?: boolean;
  /** Longest wait for the graceful close (a leader waits for its in-flight steps). Default 10 s. */
  readonly timeoutMs?: number;
}

export type { EventFilter } from './remote-operations.js';

/** The operations of `HostApi`, as the page calls them: the run operations every remote client offers (remote-operations.ts), and `info`. */
export type ClientOperations = RemoteOperations & Promised<Pick<HostApi, 'info'>>;

export interface WorkflowClient extends ClientOperations {
  /**
   * Starts a run of a workflow function the worker registered (`serveWorkflowRuntime({ workflows
   * })`), from the same `defineWorkflow` value the page imports: the input is encoded here with the
   * value codec. Resolves, once the start is durable, with a handle typed by the workflow's output
   * (`result()`, `status()`, `cancel()`, the run's events). Idempotent on run id and input (a run id
   * is drawn here when none is given). Rejects with INVALID_ARGUMENT (`unknown_workflow`: not a
   * workflow, or not registered in the worker; `unstorable_input`; a bad option), INPUT_MISMATCH
   * (the id runs another input), CLOSED or STORE_*.
   * @example
   * const run = await client.start(review, { topic: 'tides' }, { onEvent: (e) => console.log(e.type) });
   * await client.signal(run.runId, 'approve', { ok: true });
   * const summary = await run.result(); // typed by the workflow's output
   */
  start<I, O>(workflow: Workflow<I, O>, input: I, options?: RemoteStartOptions): Promise<RemoteWorkflowRun<O>>;
  /** The handle of a run of `workflow` started earlier (also by a page before a reload), typed by `workflow`; no I/O. INVALID_ARGUMENT for a bad run id or workflow. */
  workflowRun<I, O>(workflow: Workflow<I, O>, runId: string): RemoteWorkflowRun<O>;
  /**
   * Typed jobs, executed by the jobs the worker registered (`serveWorkflowRuntime({ jobs })`):
   * `jobs.submit(job, input)` gives a handle whose `result()` resolves with the typed output;
   * `jobs.handle(job, id)` re-attaches to a job after a reload.
   */
  readonly jobs: JobsClient;
  /**
   * The answer to `navigator.storage.persist()` (true when storage was already persistent);
   * null when not requested or unavailable (outside a window).
   */
  readonly persistence: Promise<boolean | null>;
  /**
   * Calls `listener` with every event from now on (optionally only one run's). Run events come
   * from the leader, wherever it runs; role events from this tab's host. Returns the unsubscribe.
   */
  subscribe(listener: (event: HostEvent) => void, filter?: EventFilter): () => void;
  /** The events from now on as an async iterator; ends when `signal` aborts or the client closes. */
  events(filter?: EventFilter & { readonly signal?: AbortSignal }): AsyncIterableIterator<HostEvent>;
  /**
   * Calls `listener` with the progress of the bulk batches the leader drives (optionally only one
   * batch's), from now on: counts by state, done fraction, rate, ETA and cost. Returns the unsubscribe.
   */
  onBatchProgress(listener: (event: BatchProgressEvent) => void, filter?: { readonly batchId?: string }): () => void;
  /**
   * Moves run `runId` of this store to `backend` (a client of `connectHttp(url)`), where it
   * continues at the step it reached (hand-off.ts). Resolves once this store no longer runs it,
   * with the run's handle at the backend (`delivered`, `status`, `result`, `events`); while the
   * page is offline or the backend away the delivery is pending and tried again (on `online`,
   * after a backoff, and by `resumeHandOffs` after a reload). A run moves between steps: while its
   * step runs, this waits for the step to settle. Handing off the same run to the same backend
   * again answers the same hand-off. Rejects with INVALID_ARGUMENT (`invalid_run_id`,
   * `invalid_backend`, a bad option), NOT_FOUND (`run_not_found`: not active here), CONFLICT
   * (`handed_off_elsewhere`, `child_run`, `pending_children`, `step_dead`), CANCELLED when
   * `options.signal` aborts the wait for a step, CLOSED or STORE_*.
   * @example
   * const backend = connectHttp('https://api.example.com/taquba');
   * const moved = await client.handOff(run.runId, backend);
   * const summary = await backend.workflowRun(review, moved.runId).result(); // finished by the server
   */
  handOff(runId: string, backend: HandOffBackend, options?: HandOffOptions): Promise<HandedOffRun>;
  /**
   * Delivers again the hand-offs to `backend` whose delivery this store has not seen confirmed
   * (a page reloaded while offline): call it once the page has its backend client. Resolves with
   * their handles (each `delivered` settles as for `handOff`). INVALID_ARGUMENT (`invalid_backend`), CLOSED, STORE_*.
   */
  resumeHandOffs(backend: HandOffBackend): Promise<readonly HandedOffRun[]>;
  /**
   * Closes the host (a leader hands over: in-flight steps finish, the lock is released) and, by
   * default, terminates the worker. Calls still pending reject with CLOSED; pending hand-offs stay
   * pending in the store (`resumeHandOffs`).
   */
  close(options?: CloseOptions): Promise<void>;
}

function matches(event: HostEvent, filter: EventFilter | undefined): boolean {
  return filter?.runId === undefined || event.type === 'role-changed' || event.runId === filter.runId;
}

function largeBuffer(bytes: unknown): ArrayBuffer | undefined {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength < TRANSFER_THRESHOLD_BYTES) return undefined;
  return bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : undefined;
}

async function requestPersistence(): Promise<boolean | null> {
  const storage = (globalThis as { navigator?: { storage?: StorageManager } }).navigator?.storage;
  if (typeof storage?.persist !== 'function') return null;
  try {
    if (typeof storage.persisted === 'function' && (await storage.persisted())) return true;
    return await storage.persist();
  } catch {
    return null;
  }
}

/**
 * Connects to a worker that called `serveWorkflowRuntime`.
 * @example
 * const worker = new Worker(new URL('./app-worker.ts', import.meta.url), { type: 'module' });
 * const client = connect(worker);
 * const { runId } = await client.submit({ input: new TextEncoder().encode('hello') });
 * client.subscribe((e) => e.type === 'terminal' && console.log(e.runId, e.status), { runId });
 */
export function connect(worker: Worker | MessagePort, options: ConnectOptions = {}): WorkflowClient {
  registerTransferHandlers();
  const remote: Remote<HostApi> = wrap<HostApi>(worker);
  const pending = new Set<(error: unknown) => void>();
  const listeners = new Set<(event: HostEvent) => void>();
  const batchListeners = new Set<(event: BatchProgressEvent) => void>();
  let port: Promise<MessagePort> | undefined;
  let closed = false;
  let closing: Promise<void> | undefined;

  /** Every call goes through here, so `close` can fail the ones a terminated worker will never answer. */
  const track = <T>(call: () => Promise<T>): Promise<T> => {
    if (closed) return Promise.reject(new ClosedError('the workflow client is closed', { reason: 'closed' }));
    return new Promise<T>((resolve, reject) => {
      pending.add(reject);
      call().then(
        (v) => {
          pending.delete(reject);
          resolve(v);
        },
        (e: unknown) => {
          pending.delete(reject);
          reject(e);
        },
      );
    });
  };

  const moveLarge = <T extends object>(value: T, candidates: unknown[]): T => {
    if (!options.transferArguments) return value;
    const buffers = new Set<ArrayBuffer>();
    for (const c of candidates) {
      const b = largeBuffer(c);
      if (b) buffers.add(b);
    }
    return buffers.size === 0 ? value : transfer(value, [...buffers]);
  };

  const ensurePort = (): void => {
    if (port || closed) return;
    port = track(() => remote.openEvents() as Promise<MessagePort>);
    port.then(
      (p) => {
        if (closed) {
          p.postMessage({ type: 'close' });
          p.close();
          return;
        }
        p.onmessage = (ev: MessageEvent) => {
          const event = ev.data as HubEvent;
          const targets = event.type === 'batch-progress' ? [...batchListeners] : [...listeners];
          for (const listener of targets as ((e: HubEvent) => void)[]) {
            try {
              listener(event);
            } catch {
              // A listener's failure stays with it.
            }
          }
        };
      },
      () => undefined,
    );
  };

  const subscribe = (listener: (event: HostEvent) => void, filter?: EventFilter): (() => void) => {
    const filtered = (event: HostEvent): void => {
      if (matches(event, filter)) listener(event);
    };
    listeners.add(filtered);
    ensurePort();
    return () => listeners.delete(filtered);
  };

  const onBatchProgress = (listener: (event: BatchProgressEvent) => void, filter: { readonly batchId?: string } = {}): (() => void) => {
    const filtered = (event: BatchProgressEvent): void => {
      if (filter.batchId === undefined || event.batchId === filter.batchId) listener(event);
    };
    batchListeners.add(filtered);
    ensurePort();
    return () => batchListeners.delete(filtered);
  };

  const ended = new Set<() => void>();

  // Every operation the page calls as it is, from the core's list; those with a method of their own follow.
  const operations = listedOperations((name, args) => track(() => (remote[name] as (...a: unknown[]) => Promise<unknown>)(...args)));

  const sendSignal = (correlationKey: string, payload: Uint8Array): Promise<SignalOutcome> => {
    const moved = moveLarge([payload], [payload])[0];
    return track(() => remote.signal(correlationKey, moved));
  };

  const result = (runId: string, opts: { readonly signal?: AbortSignal } = {}): Promise<FinishedRunView> =>
    awaitInChunks(() => track(() => remote.runWait(runId, WAIT_CHUNK_MS) as Promise<FinishedRunView | null>), opts.signal, `the run. runId=${runId}`, { runId });

  const client: WorkflowClient = {
    ...operations,
    persistence: options.persist === false ? Promise.resolve(null) : requestPersistence(),
    submit: (spec: RunSpec) => {
      // Not a spec (undefined, null, ...): the runtime rejects it with INVALID_ARGUMENT (invalid_spec).
      if (typeof spec !== 'object' || spec === null) return track(() => remote.submit(spec as never));
      const wire = toWireSpec(spec);
      const moved = moveLarge(wire, [wire.input, ...(wire.kvWrites ?? []).map(([, v]) => v)]);
      return track(() => remote.submit(moved));
    },
    signal: ((keyOrRunId: string, payloadOrName: Uint8Array | string, value?: unknown): Promise<SignalOutcome> =>
      typeof payloadOrName === 'string' ? functions.signalRun(keyOrRunId, payloadOrName, value) : sendSignal(keyOrRunId, payloadOrName)) as WorkflowClient['signal'],
    result,
    start: (workflow, input, startOptions) => functions.start(workflow, input, startOptions),
    workflowRun: (workflow, runId) => functions.workflowRun(workflow, runId),
    jobs: createJobsClient({
      jobSubmit: (name, input, opts) => track(() => remote.jobSubmit(name, moveLarge([input], [input])[0], opts)),
      // Comlink's `Remote` distributes over the union; the answer is the facade's type.
      jobWait: (name, id, waitMs) => track(() => remote.jobWait(name, id, waitMs) as Promise<WireJobOutcome | null>),
      jobFetch: (name, id) => track(() => remote.jobFetch(name, id) as Promise<WireJobOutcome | null>),
      jobStatus: (id) => track(() => remote.jobStatus(id)),
      jobCancel: (id) => track(() => remote.jobCancel(id)),
    }),
    info: () => track(() => remote.info()),
    handOff: (runId, backend, handOffOptions) => handOffs.handOff(runId, backend, handOffOptions),
    resumeHandOffs: (backend) => handOffs.resumeHandOffs(backend),
    subscribe,
    onBatchProgress,
    events(filter = {}) {
      const stream = pushStream<HostEvent>(() => {
        unsubscribe();
        ended.delete(stream.end);
      });
      const unsubscribe = subscribe((event) => stream.push(event), filter);
      ended.add(stream.end);
      filter.signal?.addEventListener('abort', stream.end, { once: true });
      if (closed || filter.signal?.aborted === true) stream.end();
      return stream.iterator;
    },
    close(closeOptions: CloseOptions = {}) {
      closing ??= (async () => {
        const timeoutMs = closeOptions.timeoutMs ?? 10_000;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
        await Promise.race([remote.close().catch(() => undefined), timeout]);
        clearTimeout(timer);
        closed = true;
        handOffs.close();
        const error = new ClosedError('the workflow client is closed', { reason: 'closed' });
        for (const reject of pending) reject(error);
        pending.clear();
        listeners.clear();
        batchListeners.clear();
        for (const finish of [...ended]) finish();
        const p = await port?.catch(() => undefined);
        p?.close();
        if (closeOptions.terminate !== false && typeof (worker as Worker).terminate === 'function') (worker as Worker).terminate();
      })();
      return closing;
    },
  };
  // Defined after the client: they call the client's own operations (tracked, closed with it).
  const handOffs = createHandOffs(client);
  const functions = createWorkflowClient({
    submit: (spec) => client.submit(spec),
    result,
    status: (runId) => client.status(runId),
    cancel: (runId) => client.cancel(runId),
    signal: sendSignal,
    info: () => client.info(),
    subscribe,
    events: (filter) => client.events(filter),
  });
  return client;
}
