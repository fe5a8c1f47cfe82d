/**
 * One owned shard in one member: its engine opened as writer (fencing any older owner, RFC 0001),
 * its runtime host's workers (runtime-host.ts: the runtime, the jobs when the cluster has any,
 * and the scheduler of the schedules placed on this shard when it has schedules,
 * cluster-schedules.ts; the member applies its inbox, inbox.ts). Built when the member takes the shard's lease,
 * closed when it hands the shard over or loses it. Engine opens pass through the member's
 * `OpenGate`, so a failover that hands a member many shards opens them in parallel without every
 * replay competing for the same CPU and store at once.
 */
import type { ObjectStore } from '../objects/object-store.js';
import { Queue } from '../queue/index.js';
import type { RunnerHandle, WorkflowRuntime } from '../workflow/index.js';
import { ClosedError } from '../errors.js';
import { createRuntimeHost, type RuntimeHost } from '../operations/runtime-host.js';
import type { ClusterLayout } from './layout.js';
import type { ResolvedClusterOptions } from './cluster-options.js';
import { firingRunIdOn, scheduleShard } from './cluster-schedules.js';

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

/**
 * Engine opens one member runs at once (each replays at most one memtable of WAL). Opens mostly
 * wait on store round trips, so more at once finish sooner: moving 8 shards onto a member on the
 * S3 test server took 8.9-9.7 s from kill -9 with 8 at once, 11-14 s with 4, 12-15 s with 2. The
 * bound keeps a member that takes dozens of shards from opening all of them at once.
 */
export const MAX_CONCURRENT_OPENS = 8;

/** A counting semaphore for engine opens: waiters go in the order they came. */
export class OpenGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit = MAX_CONCURRENT_OPENS) {}

  /** Opens running or waiting. */
  get busy(): number {
    return this.running + this.waiting.length;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await fn();
    } finally {
      // Hand the slot straight to the next waiter (the count stays), or free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

export class ShardHost {
  private queue: Queue | undefined;
  private host: RuntimeHost | undefined;
  private worker: RunnerHandle | undefined;
  private readonly stop = new AbortController();
  private closing: Promise<void> | undefined;
  /** Why the shard stopped working (FENCED when a newer owner opened its engine); the member drops it. */
  failure: unknown;
  /** Settles when the engine is open and the worker runs (rejects when the open failed). */
  readonly ready: Promise<void>;
  /** When the worker started (clock ms), undefined until then. */
  openedAt: number | undefined;

  constructor(
    readonly shard: number,
    private readonly store: ObjectStore,
    private readonly layout: ClusterLayout,
    private readonly options: ResolvedClusterOptions,
    /** Settles when this member's previous host of the shard has closed (opened after it). */
    private readonly after: Promise<void> = Promise.resolve(),
    private readonly gate: OpenGate = new OpenGate(),
  ) {
    this.ready = this.open();
    this.ready.catch((e) => (this.failure ??= e));
  }

  /** True when the host was closed by its member (a hand-over or a drop), not by a failure of its own. */
  get closedByOwner(): boolean {
    return this.stop.signal.aborted;
  }

  private async open(): Promise<void> {
    const o = this.options;
    await this.after.catch(() => undefined);
    // The gate's slot covers the engine open only: a shard waiting for one holds its lease (renewed
    // on the member's timer) and opens as soon as a slot frees.
    const queue = await this.gate.run(async () => {
      if (this.stop.signal.aborted) throw new ClosedError(`shard ${this.shard} was closed before it opened`);
      return Queue.open(this.store, this.layout.queuePath(this.shard), { clock: o.clock, logger: o.logger, ...o.queueOptions });
    });
    if (this.stop.signal.aborted) {
      await queue.close();
      throw new ClosedError(`shard ${this.shard} was closed while it opened`);
    }
    this.queue = queue;
    this.host = createRuntimeHost(queue, this.store, {
      runner: o.runner,
      hook: o.hook,
      // Commands reach a shard through the cluster's inbox: no runtime inbox (on S3 it would cost a LIST per poll).
      runtimeOptions: { clock: o.clock, ...o.runtimeOptions, memoPrefix: this.layout.memoPrefix(this.shard), commandPollMs: null },
      jobs: [...o.jobs.values()],
      jobRunnerOptions: { memoPrefix: this.layout.jobsMemoPrefix(this.shard), clock: o.clock, logger: o.logger },
      ...(o.schedules === undefined
        ? {}
        : {
            schedules: o.schedules.filter((s) => scheduleShard(s.name, o.shards) === this.shard),
            cronOptions: { logger: o.logger, ...o.cronOptions, firingRunId: firingRunIdOn(this.shard, o.shards) },
          }),
    });
    this.worker = this.host.spawn();
    this.worker.done.catch((e) => {
      this.failure ??= e;
    });
    this.openedAt = o.clock.now();
  }

  /** The shard's runtime once open (undefined while opening or after a failure). */
  get openRuntime(): WorkflowRuntime | undefined {
    return this.failure === undefined && !this.stop.signal.aborted ? this.host?.runtime : undefined;
  }

  /** The shard's typed-jobs runtime once open (only with `jobs`). */
  get openJobsRuntime(): WorkflowRuntime | undefined {
    return this.openRuntime === undefined ? undefined : this.host?.jobs?.runtime;
  }

  /** The shard's queue handle (tests reach the engine through it). */
  get openQueue(): Queue | undefined {
    return this.queue;
  }

  /** Stops the workers (in-flight steps finish or fail FENCED), then closes the engine. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.stop.abort();
      await this.ready.catch(() => undefined);
      await this.worker?.shutdown().catch(() => undefined);
      await this.queue?.close().catch((e) => this.options.logger.debug('closing a shard engine failed', { shard: this.shard, error: (e as Error)?.message }));
    })();
    return this.closing;
  }
}
