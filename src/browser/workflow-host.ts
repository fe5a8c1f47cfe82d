/**
 * `WorkflowHost`: one worker's share of a store. Every tab's worker runs one; the one holding
 * the store's Web Lock is the leader and the store's single writer, the others forward to it
 * (tab-coordination.ts).
 *
 * Leadership protocol:
 * 1. On start, join the store's channel and queue for the exclusive Web Lock
 *    `taquba-workflow:<kind>:<name>` (locks and channels are per origin, so every tab and
 *    worker of the app shares them).
 * 2. Lock granted: open the store and the queue. Opening the queue bumps the writer epoch, which
 *    fences any writer that could still be alive; transient store errors (a dying worker's OPFS
 *    handles not yet released) are retried a few times.
 * 3. Promote scheduled jobs that came due while no tab was open, start the runtime (and the
 *    cron scheduler, with `schedules`), announce the leadership. Interrupted claims of the
 *    previous leader were requeued by the open, so its in-flight steps are redelivered at once
 *    (their memoized work is not redone). Schedules fire here only: the leader holds the writer,
 *    and a new leader goes on from the firing its predecessor recorded (one per fire time).
 * 4. Hold the lock until `close`, or until the runtime fails (the host then reports `failed`,
 *    releases the lock, and another tab takes over).
 * 5. Stop: answer the requests in flight, resign, shut the runtime down (in-flight steps finish),
 *    close the queue and the store, and only then release the lock. A leader that dies instead
 *    loses its in-flight steps; the browser releases its lock and step 2 runs in the next host.
 */
import { toHex } from '../core/bytes.js';
import { systemClock } from '../core/clock.js';
import { newCommandId } from '../core/workflow/commands/ledger.js';
import { ClosedError, InvalidConfigError, isTaqubaError, UnsupportedPlatformError } from '../core/errors.js';
import type { ObjectStore } from '../core/objects/object-store.js';
import { Queue, retryBackoffMs, type QueueOptions } from '../core/queue/index.js';
import { createRunIdGenerator, DEFAULT_QUEUE_NAME, NoopTerminalHook, type AnyWorkflow, type RunnerHandle, type StepRunner, type StepRunnerObject, type TerminalHook, type WorkflowRuntimeOptions } from '../core/workflow/index.js';
import { WorkflowRegistry } from '../core/workflow/functions/define.js';
import { RUNNER_WRAPPER, type HostRuntimeOptions } from '../core/workflow/runtime-options.js';
import type { Job, JobRunnerOptions } from '../core/jobs/index.js';
import type { AnyJob } from '../core/jobs/job.js';
import { DEFAULT_JOBS_QUEUE_NAME } from '../core/jobs/job-runner.js';
import type { AnySchedule } from '../core/cron/index.js';
import { checkHostSchedules } from '../core/cron/host-schedules.js';
import { IndexedDbObjectStore } from '../stores/indexeddb/index.js';
import { OpfsObjectStore } from '../stores/opfs/index.js';
import type { HostBulk } from '../core/operations/local-bulk-operations.js';
import { createRuntimeHost, type RuntimeHost, type RuntimeHostOptions } from '../core/operations/runtime-host.js';
import { isCommand } from '../core/operations/operation-list.js';
import type { BatchProgressEvent, HostEvent, HostInfo, HostRole, OperationCall, RunEvent, WireError } from './protocol.js';
import { EventHub, observeHook, observeRunner, terminalEvent } from './run-events.js';
import { TabCoordinator } from './tab-coordination.js';
import { answerBytes } from './transfer-handlers.js';
import { fromWireError, toWireError } from './wire-error.js';

/** Which store the runtime lives in: a built-in adapter by kind, or the app's own factory. */
export type HostStore = 'indexeddb' | 'opfs' | ((name: string) => Promise<ObjectStore>);

/**
 * A job for `WorkflowHostOptions.jobs`: any `Job` from `defineJob`. (Only the shape the host
 * needs to accept every job: a `Job` is invariant in its input, so no single `Job<...>` type
 * admits them all.)
 */
export type HostJob = Pick<Job<never, unknown, unknown>, 'name' | 'codec'>;

/**
 * What the leader runs its runs with: the app's `StepRunner`, or workflow functions. Exactly one
 * of `runner` and `workflows`.
 */
export type HostRunner =
  | {
      /** The app's step logic, a function or an object with `runStep` (it runs in the leader's worker). */
      readonly runner: StepRunner;
      readonly workflows?: undefined;
    }
  | {
      /**
       * Workflow functions (`defineWorkflow`) the leader's worker runs (a `WorkflowRuntime` built
       * with `{ workflows }`). Pages import the same definitions and start them with
       * `client.start(workflow, input)`; only a definition's name and version cross to the worker.
       */
      readonly workflows: readonly AnyWorkflow[];
      readonly runner?: undefined;
    };

/** The worker host's options: the store and its name, what runs the runs, and the rest. */
export type WorkflowHostOptions = HostRunner & WorkflowHostSettings;

/** The options of every worker host beside its `runner` or `workflows`. */
export interface WorkflowHostSettings {
  /**
   * The store: `'indexeddb'` (database `taquba:<name>`), `'opfs'` (directory `taquba/<name>` of
   * the origin private file system; dedicated workers only), or a factory. Every tab of the app
   * must pass the same store and name.
   */
  readonly store: HostStore;
  /** Names the store, its lock and its channel. 1..100 characters of `[A-Za-z0-9_.-]`. */
  readonly name: string;
  /**
   * Typed jobs (`defineJob`) the leader's worker executes, on a `JobRunner` over the same queue
   * and store (queue name `jobs` unless `jobRunnerOptions` say otherwise). Pages submit and await
   * them with `client.jobs`. Default: none.
   */
  readonly jobs?: readonly HostJob[];
  /** Options of the leader's `JobRunner` (clock and logger default to the runtime's). */
  readonly jobRunnerOptions?: JobRunnerOptions;
  /**
   * A bulk pipeline the leader's worker runs (a `Bulk` over the same queue and store, queue name
   * `bulk-items` unless its options say otherwise). Pages submit batches with
   * `client.bulkSubmit` and follow `batch-progress` events. Default: none.
   */
  readonly bulk?: HostBulk;
  /**
   * Cron schedules the leader fires on its runtime and jobs (`Schedule` from `taquba-workflow`:
   * a name, a 5-field expression, a zone, and a workflow `start`, a `submit`, a typed `job` or a
   * plain `enqueue`). Kept in the store: one firing per fire time whichever tab leads, a new leader
   * going on from the last recorded firing (after a time with no tab open, the one overdue firing
   * is made up, no backfill). They are the app's whole declaration: a schedule dropped from the
   * list is deleted when the next leader starts. Pages list them with `client.listSchedules()`.
   * Default: none (no scheduler).
   */
  readonly schedules?: readonly AnySchedule[];
  /** Options of the leader's `CronScheduler`: `retryDelayMs`, and its clock and logger (default the runtime's). */
  readonly cronOptions?: RuntimeHostOptions['cronOptions'];
  /** The app's terminal hook. Default: none. */
  readonly terminalHook?: TerminalHook;
  /** Object-key prefix of the queue inside the store. Default `workflow`. */
  readonly path?: string;
  readonly queueOptions?: QueueOptions;
  readonly runtimeOptions?: WorkflowRuntimeOptions;
  /** This host's id (the `executor` of its events). Default: random. */
  readonly hostId?: string;
}

const NAME_PATTERN = /^[A-Za-z0-9_.-]{1,100}$/;
const OPEN_ATTEMPTS = 6;
const OPEN_RETRY_BASE_MS = 100;

function randomHostId(): string {
  return `host-${toHex(crypto.getRandomValues(new Uint8Array(8)))}`;
}

function storeKind(store: HostStore): HostInfo['store'] {
  return typeof store === 'function' ? 'custom' : store;
}

/** Opens the configured store. UNSUPPORTED_PLATFORM / STORE_* from the adapter. */
async function openStore(store: HostStore, name: string): Promise<ObjectStore> {
  if (store === 'indexeddb') return IndexedDbObjectStore.open({ name });
  if (store === 'opfs') return OpfsObjectStore.open({ directory: `taquba/${name}` });
  return store(name);
}

async function closeStore(store: ObjectStore | undefined): Promise<void> {
  const closable = store as { close?: () => Promise<void> } | undefined;
  if (typeof closable?.close === 'function') await closable.close();
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** INVALID_CONFIG unless exactly one of `runner` and `workflows` is given, and well formed; the workflows' registry. */
function checkRunner(options: WorkflowHostOptions): WorkflowRegistry | undefined {
  const { runner, workflows } = options as { runner?: unknown; workflows?: unknown };
  if ((runner === undefined) === (workflows === undefined)) {
    throw new InvalidConfigError('pass exactly one of runner (a StepRunner) and workflows (defineWorkflow values)', { option: runner === undefined ? 'runner' : 'workflows' });
  }
  if (workflows !== undefined) {
    try {
      // Built for its checks only (an empty list, a value not from defineWorkflow, a version given twice): the runtime builds its own.
      return new WorkflowRegistry({ workflows: workflows as readonly AnyWorkflow[] });
    } catch (e) {
      throw new InvalidConfigError(e instanceof Error ? e.message : String(e), { option: 'workflows' });
    }
  }
  if (typeof runner !== 'function' && typeof (runner as { runStep?: unknown } | null)?.runStep !== 'function') {
    throw new InvalidConfigError('runner must be a StepRunner or a step function', { option: 'runner' });
  }
  return undefined;
}

export class WorkflowHost {
  readonly hostId: string;
  readonly name: string;
  readonly lockName: string;
  private readonly events = new EventHub();
  private readonly coordinator: TabCoordinator;
  private readonly nextRunId = createRunIdGenerator();
  private readonly lockWait = new AbortController();
  private role: HostRole = 'starting';
  private failure: WireError | null = null;
  private stopLeading: (() => void) | undefined;
  private leadership: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private closed = false;

  /**
   * Throws INVALID_CONFIG for a bad name, store or runner, INVALID_ARGUMENT for a bad schedule
   * (checked here, not in the leader: every leader would fail on it). Touches no browser API.
   */
  constructor(private readonly options: WorkflowHostOptions) {
    if (typeof options?.name !== 'string' || !NAME_PATTERN.test(options.name)) {
      throw new InvalidConfigError(`host name must be 1..100 characters of [A-Za-z0-9_.-]. name=${JSON.stringify(options?.name)}`, { option: 'name' });
    }
    const store = options.store;
    if (store !== 'indexeddb' && store !== 'opfs' && typeof store !== 'function') {
      throw new InvalidConfigError(`store must be 'indexeddb', 'opfs' or a factory. store=${String(store)}`, { option: 'store' });
    }
    const workflows = checkRunner(options);
    if (options.schedules !== undefined) {
      checkHostSchedules(options.schedules, {
        queueName: options.runtimeOptions?.queueName ?? DEFAULT_QUEUE_NAME,
        workflows,
        jobs: (options.jobs ?? []) as readonly AnyJob[],
        jobsQueueName: options.jobRunnerOptions?.queueName ?? DEFAULT_JOBS_QUEUE_NAME,
      });
    }
    this.hostId = options.hostId ?? randomHostId();
    this.name = options.name;
    const id = `taquba-workflow:${storeKind(store)}:${options.name}`;
    this.lockName = id;
    this.coordinator = new TabCoordinator({
      channelName: id,
      hostId: this.hostId,
      onLeaderChange: (leader) => {
        if (this.role === 'starting' || this.role === 'follower') this.setRole(leader === null ? 'starting' : 'follower');
        else this.announceRole();
      },
      onEvent: (event) => this.events.deliver(event),
    });
  }

  /** Joins the store's tabs and queues for leadership (step 1). Idempotent. */
  start(): void {
    if (this.leadership || this.closed) return;
    this.coordinator.start();
    const locks = (globalThis as { navigator?: { locks?: LockManager } }).navigator?.locks;
    if (!locks) {
      this.fail(new UnsupportedPlatformError('web locks are not available here; the browser host needs navigator.locks', { api: 'navigator.locks' }));
      this.leadership = Promise.resolve();
      return;
    }
    this.leadership = locks
      .request(this.lockName, { mode: 'exclusive', signal: this.lockWait.signal }, () => this.lead())
      .then(
        () => undefined,
        (e: unknown) => {
          if (!this.lockWait.signal.aborted) this.fail(e);
        },
      );
  }

  /** Runs one operation on the leader (here or in another tab). */
  call(call: OperationCall): Promise<unknown> {
    if (call.method === 'submit') {
      // Every submission carries a run id, so it can be sent again safely after a takeover.
      const spec = call.args[0] ?? {};
      if (typeof spec === 'object' && spec !== null && spec.runId === undefined) call = { method: 'submit', args: [{ ...spec, runId: this.nextRunId() }] };
    }
    if (call.method === 'bulkSubmit') {
      // Likewise every batch submission carries a batch id.
      const options = call.args[1] ?? {};
      if (typeof options === 'object' && options !== null && options.batchId === undefined) call = { method: 'bulkSubmit', args: [call.args[0], { ...options, batchId: this.nextRunId() }] };
    }
    // A write gets its command id here, before any forwarding: every leader it reaches applies it once.
    if (isCommand(call.method) && call.commandId === undefined) call = { ...call, commandId: newCommandId(systemClock) };
    if (this.role === 'failed' && this.coordinator.leader === null) return Promise.reject(fromWireError(this.failure!));
    return this.coordinator.call(call);
  }

  /** Subscribes to this host's events. */
  listen(listener: (event: HostEvent) => void): () => void {
    return this.events.listen((event) => {
      if (event.type !== 'batch-progress') listener(event);
    });
  }

  /** Subscribes to the progress events of the bulk batches the leader drives. */
  listenBatches(listener: (event: BatchProgressEvent) => void): () => void {
    return this.events.listen((event) => {
      if (event.type === 'batch-progress') listener(event);
    });
  }

  /** A port delivering this host's events (for a page client). */
  openEventPort(): MessagePort {
    return this.events.openPort();
  }

  async info(): Promise<HostInfo> {
    let persisted: boolean | null = null;
    try {
      const storage = (globalThis as { navigator?: { storage?: StorageManager } }).navigator?.storage;
      if (typeof storage?.persisted === 'function') persisted = await storage.persisted();
    } catch {
      persisted = null;
    }
    return {
      hostId: this.hostId,
      name: this.name,
      store: storeKind(this.options.store),
      role: this.role,
      leader: this.coordinator.leader,
      persisted,
      error: this.failure,
      workflows: this.options.workflows?.map((w) => ({ name: w.name, version: w.version })) ?? null,
    };
  }

  get currentRole(): HostRole {
    return this.role;
  }

  /**
   * Step 5: leaves the store. A leader answers its in-flight requests, shuts the runtime down
   * (waiting for in-flight steps), closes the store and releases the lock. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      this.lockWait.abort();
      this.stopLeading?.();
      await this.leadership;
      this.coordinator.close();
      this.setRole('closed');
      this.events.clear();
    })();
    return this.closing;
  }

  /** Steps 2-5, while holding the lock. */
  private async lead(): Promise<void> {
    if (this.closed) return;
    let store: ObjectStore | undefined;
    let queue: Queue | undefined;
    let host: RuntimeHost | undefined;
    let worker: RunnerHandle | undefined;
    const stopped = new Promise<void>((resolve) => (this.stopLeading = resolve));
    try {
      store = await openStore(this.options.store, this.name);
      queue = await this.openQueue(store);
      if (this.closed) return;
      const q = queue;
      const runtimeOptions = this.options.runtimeOptions ?? {};
      const queueName = runtimeOptions.queueName ?? DEFAULT_QUEUE_NAME;
      const clock = runtimeOptions.clock ?? q.clock;
      const seen = new Set<string>();
      const emit = (event: RunEvent | BatchProgressEvent): void => {
        this.events.deliver(event);
        this.coordinator.publish(event);
      };
      // Whatever runs the steps (the app's runner, or the runtime's function runner) reports run events.
      const observe = (runner: StepRunnerObject): StepRunnerObject =>
        observeRunner(runner, {
          executor: this.hostId,
          clock,
          backoffMs: (attempt) => retryBackoffMs(q.queueConfig(queueName), attempt),
          emit,
        });
      const hook = observeHook(this.options.terminalHook ?? new NoopTerminalHook(), (outcome) => {
        host?.operations.noteTerminal(outcome);
        // Notifications are delivered at least once: report each termination once per leader.
        const key = `${outcome.runId}:${outcome.finalStep}:${outcome.status}`;
        if (seen.has(key)) return;
        seen.add(key);
        if (seen.size > 10_000) seen.delete(seen.values().next().value as string);
        emit(terminalEvent(outcome, this.hostId, clock.now()));
      });
      // Other tabs reach the leader through the tab forwarder; no other process shares a browser store.
      const hostOptions: HostRuntimeOptions = { commandPollMs: null, ...runtimeOptions, [RUNNER_WRAPPER]: observe };
      host = createRuntimeHost(q, store, {
        runner: this.options.workflows ? { workflows: this.options.workflows } : this.options.runner,
        hook,
        runtimeOptions: hostOptions,
        jobs: this.options.jobs as readonly AnyJob[] | undefined,
        jobRunnerOptions: this.options.jobRunnerOptions,
        bulk: this.options.bulk,
        schedules: this.options.schedules,
        cronOptions: this.options.cronOptions,
        onBatchProgress: (update) => emit({ type: 'batch-progress', executor: this.hostId, ...update }),
        exportBytes: answerBytes,
      });
      // Timers that came due while no tab had the store open fire now, not at the next tick.
      await q.promoteScheduledNow().catch(() => undefined);
      worker = host.spawn();
      this.coordinator.lead(host.operations);
      this.setRole('leader');
      await Promise.race([stopped, worker.done]);
      if (!this.closed) throw new ClosedError('the workflow runtime stopped', { reason: 'runtime_stopped' });
    } catch (e) {
      if (!this.closed) this.fail(e);
    } finally {
      // Run and job waits answer (null) at once, so the requests in flight that `resign` waits for end.
      host?.operations.stop();
      await this.coordinator.resign();
      await worker?.shutdown().catch(() => undefined);
      await queue?.close().catch(() => undefined);
      await closeStore(store).catch(() => undefined);
      if (!this.closed && this.role === 'leader') this.setRole('starting');
    }
  }

  private async openQueue(store: ObjectStore): Promise<Queue> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await Queue.open(store, { path: this.options.path ?? 'workflow', ...this.options.queueOptions });
      } catch (e) {
        if (attempt >= OPEN_ATTEMPTS || !isTaqubaError(e, 'STORE_UNAVAILABLE') || this.closed) throw e;
        await sleep(OPEN_RETRY_BASE_MS * 2 ** (attempt - 1));
      }
    }
  }

  private fail(error: unknown): void {
    this.failure = toWireError(error);
    this.setRole('failed');
    if (this.coordinator.leader === null) this.coordinator.rejectUnrouted(fromWireError(this.failure));
  }

  private setRole(role: HostRole): void {
    this.role = role;
    this.announceRole();
  }

  private announceRole(): void {
    this.events.deliver({ type: 'role-changed', role: this.role, leader: this.coordinator.leader, error: this.failure });
  }
}
