/**
 * One owned shard in one member: its engine opened as writer (fencing any older owner, RFC 0001),
 * its workflow runtime's worker, (the member applies its inbox, inbox.ts). Built when the
 * member takes the shard's lease, closed when it hands the shard over or loses it.
 */
import type { ObjectStore } from '../objects/object-store.js';
import { Queue } from '../queue/index.js';
import { WorkflowRuntime, type RunnerHandle } from '../workflow/index.js';
import { ClosedError } from '../errors.js';
import { JobRunner } from '../workflow/jobs/index.js';
import type { ClusterLayout } from './layout.js';
import type { ResolvedClusterOptions } from './cluster-options.js';

/**
 * The store without `lockWriter`: a shard engine must be able to take over from a paused owner
 * whose process lock is still held (filesystem store). The lease decides the owner, the engine's
 * fencing keeps the history linear, on every store (RFC 0003 "Process locks").
 */
export function withoutWriterLock(store: ObjectStore): ObjectStore {
  if (store.lockWriter === undefined) return store;
  const view: ObjectStore = {
    get: (key, options) => store.get(key, options),
    put: (key, data, options) => store.put(key, data, options),
    delete: (key) => store.delete(key),
    list: (prefix, options) => store.list(prefix, options),
  };
  if (store.deleteMany) {
    const deleteMany = store.deleteMany.bind(store);
    return { ...view, deleteMany };
  }
  return view;
}

export class ShardHost {
  private queue: Queue | undefined;
  private runtime: WorkflowRuntime | undefined;
  private worker: RunnerHandle | undefined;
  private jobs: JobRunner | undefined;
  private jobWorker: RunnerHandle | undefined;
  private readonly stop = new AbortController();
  private closing: Promise<void> | undefined;
  /** Why the shard stopped working (FENCED when a newer owner opened its engine); the member drops it. */
  failure: unknown;
  /** Settles when the engine is open and the worker runs (rejects when the open failed). */
  readonly ready: Promise<void>;

  constructor(
    readonly shard: number,
    private readonly store: ObjectStore,
    private readonly layout: ClusterLayout,
    private readonly options: ResolvedClusterOptions,
    /** Settles when this member's previous host of the shard has closed (opened after it). */
    private readonly after: Promise<void> = Promise.resolve(),
  ) {
    this.ready = this.open();
    this.ready.catch((e) => (this.failure ??= e));
  }

  private async open(): Promise<void> {
    const o = this.options;
    await this.after.catch(() => undefined);
    if (this.stop.signal.aborted) throw new ClosedError(`shard ${this.shard} was closed before it opened`);
    const queue = await Queue.open(this.store, this.layout.queuePath(this.shard), { clock: o.clock, logger: o.logger, ...o.queueOptions });
    if (this.stop.signal.aborted) {
      await queue.close();
      throw new ClosedError(`shard ${this.shard} was closed while it opened`);
    }
    this.queue = queue;
    this.runtime = new WorkflowRuntime(queue, this.store, o.runner, o.hook, { clock: o.clock, ...o.runtimeOptions, memoPrefix: this.layout.memoPrefix(this.shard) });
    this.worker = this.runtime.spawn(this.stop.signal);
    this.worker.done.catch((e) => {
      this.failure ??= e;
    });
    if (o.jobs.size > 0) {
      const jobs = new JobRunner(queue, this.store, { memoPrefix: this.layout.jobsMemoPrefix(this.shard), clock: o.clock, logger: o.logger });
      for (const job of o.jobs.values()) jobs.register(job);
      this.jobs = jobs;
      this.jobWorker = jobs.spawn(this.stop.signal);
      this.jobWorker.done.catch((e) => {
        this.failure ??= e;
      });
    }
  }

  /** The shard's runtime once open (undefined while opening or after a failure). */
  get openRuntime(): WorkflowRuntime | undefined {
    return this.failure === undefined && !this.stop.signal.aborted ? this.runtime : undefined;
  }

  /** The shard's typed-jobs runtime once open (only with `jobs`). */
  get openJobsRuntime(): WorkflowRuntime | undefined {
    return this.openRuntime === undefined ? undefined : this.jobs?.runtime;
  }

  /** The shard's queue handle (tests reach the engine through it). */
  get openQueue(): Queue | undefined {
    return this.queue;
  }

  /** Stops the worker (in-flight steps finish or fail FENCED), then closes the engine. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.stop.abort();
      await this.ready.catch(() => undefined);
      await this.worker?.done.catch(() => undefined);
      await this.jobWorker?.done.catch(() => undefined);
      await this.queue?.close().catch((e) => this.options.logger.debug('closing a shard engine failed', { shard: this.shard, error: (e as Error)?.message }));
    })();
    return this.closing;
  }
}
