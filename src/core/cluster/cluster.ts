/**
 * `Cluster`: one member of a cluster of processes sharing the shards of one store (RFC 0003).
 * The member loop (membership, desired owners, leases, the owned shards' `ShardHost`s) is
 * `MemberLoop`, the heartbeat `Heartbeat`; commands for other members' shards go through inboxes
 * (inbox.ts).
 */
import { ClosedError, InvalidArgumentError, InvalidConfigError, isTaqubaError, NotFoundError, TaqubaError } from '../errors.js';
import { createObject } from '../objects/create-object.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { Queue } from '../queue/index.js';
import { checkObjectStore } from '../options.js';
import { createRunIdGenerator, isFinishedRun, WorkflowReader, type FinishedReadOptions, type FinishedRun, type RunDetails, type RunSpec, type RunStatus, type SignalOutcome, type SubmitOutcome, type WorkflowRuntime } from '../workflow/index.js';
import { validateRunId } from '../workflow/validation.js';
import { validateSpec } from '../workflow/runs/submit.js';
import { newCommandId, validateCommandId, type CommandOptions } from '../workflow/commands/ledger.js';
import { checkCorrelationKey } from '../workflow/steps/outcome.js';
import { DEFAULT_QUEUE_NAME } from '../workflow/constants.js';
import { DEFAULT_JOBS_QUEUE_NAME } from '../jobs/job-runner.js';
import type { JobSubmitOptions } from '../jobs/index.js';
import type { Job } from '../jobs/job.js';
import { JobHandle } from '../jobs/job-handle.js';
import { ClusterJobOutcomes, finishedJob, prepareJob } from './cluster-jobs.js';
import { resolveClusterOptions, type ClusterOptions, type ResolvedClusterOptions } from './cluster-options.js';
import { applyInbox, collectOrphanReplies, CommandSender, MAX_BACKOFF_FACTOR } from '../workflow/commands/inbox.js';
import { submitCommand, type RunCommand } from '../workflow/commands/run-command.js';
import { ClusterLayout, parseInboxKey, routingText, shardOfText } from './layout.js';
import { Heartbeat } from './heartbeat.js';
import { MemberLoop, type RenewalStats } from './member-loop.js';
import { decodeCluster, encodeCluster, } from './records.js';
import type { Workflow } from '../workflow/functions/define.js';
import { startSpec, WorkflowRun, type StartOptions, type WorkflowRunSource } from '../workflow/functions/workflow-run.js';
import { signalArguments } from '../workflow/functions/function-runner.js';
import type { RunResultOptions } from '../workflow/runs/run-result.js';
import { listSchedules, type ScheduleInfo } from '../cron/index.js';

export type { RenewalStats } from './member-loop.js';

/**
 * Joins the cluster `options.name` on `store` as a member (creating the cluster with
 * `options.shards` shards if it does not exist), and starts the member loop: the member takes a
 * fair share of the shards, runs their workflows, and hands them over when it leaves.
 * Rejects with INVALID_CONFIG (bad options, or a cluster created with another shard count),
 * INVALID_ARGUMENT (runner or hook of the wrong shape), LOCKED (`details.reason`
 * `member_id_in_use`: another live process beats under `options.memberId`), CORRUPT_DATA or
 * store errors. When the member id's heartbeat is fresh but not ours (a restart right after a
 * crash, or a second process), the join first watches it for about `leaseMs / 3`.
 * @example
 * const cluster = await openCluster(store, { name: 'orders', shards: 16, runner });
 * await cluster.submit({ runId: 'order-42', input });
 * await cluster.leave();
 */
export async function openCluster(store: ObjectStore, options: ClusterOptions): Promise<Cluster> {
  checkObjectStore(store);
  const resolved = resolveClusterOptions(options);
  const layout = new ClusterLayout(resolved.name);
  const created = await createObject(store, layout.clusterKey, encodeCluster({ shards: resolved.shards }));
  if (!created.created) {
    const existing = created.existing ?? (await store.get(layout.clusterKey));
    if (existing) {
      const record = decodeCluster(existing.data, layout.clusterKey);
      if (record.shards !== resolved.shards) {
        throw new InvalidConfigError(`cluster ${resolved.name} was created with ${record.shards} shards; shards cannot change. shards=${resolved.shards}`, {
          option: 'shards',
          value: resolved.shards,
          existing: record.shards,
        });
      }
    }
  }
  const cluster = new Cluster(store, resolved, layout);
  await cluster.start();
  return cluster;
}

export class Cluster {
  private readonly readers = new Map<string, Promise<WorkflowReader>>();
  private readonly stop = new AbortController();
  private readonly nextRunId: () => string;
  private readonly sender: CommandSender;
  private inboxLoop: Promise<void> | undefined;
  private left: Promise<void> | undefined;
  /** Why this member stopped by itself (LOCKED: another process has its member id); later calls reject with it. */
  private failure: TaqubaError | undefined;
  /** When `collectReplies` last ran (clock ms). */
  private repliesCollectedAt = -Infinity;
  private readonly heartbeat: Heartbeat | undefined;
  private readonly member: MemberLoop;

  /** @internal Use `openCluster`. */
  constructor(
    private readonly store: ObjectStore,
    private readonly options: ResolvedClusterOptions,
    private readonly layout: ClusterLayout,
  ) {
    const o = options;
    this.heartbeat = o.takesShards
      ? new Heartbeat(store, layout, { memberId: o.memberId, leaseMs: o.leaseMs, maxClockSkewMs: o.maxClockSkewMs, clock: o.clock, onOtherYields: (other) => MemberLoop.otherYields(o, other) })
      : undefined;
    this.member = new MemberLoop(store, layout, o, this.heartbeat, this.stop.signal, (e) => this.fail(e), () => void this.collectReplies());
    this.nextRunId = createRunIdGenerator(options.clock);
    this.sender = new CommandSender(store, { clock: options.clock, pollMs: options.inboxPollMs, timeoutMs: options.commandTimeoutMs, signal: this.stop.signal });
  }

  /** This member's id (its heartbeat object's name). */
  get memberId(): string {
    return this.options.memberId;
  }

  /** The shard count, fixed at the cluster's creation. */
  get shardCount(): number {
    return this.options.shards;
  }

  /** The cluster name (the key prefix of all its objects). */
  get name(): string {
    return this.options.name;
  }

  /** The shard a run id belongs to. INVALID_ARGUMENT for a bad run id. */
  shardOf(runId: string): number {
    validateRunId(runId);
    return shardOfText(runId, this.options.shards);
  }

  /**
   * The shard a signal on `correlationKey` goes to: that of the text before its first `#` (the
   * whole key without one). A run waits only on keys of its own shard, e.g. `${runId}#approval`.
   */
  shardOfCorrelationKey(correlationKey: string): number {
    checkCorrelationKey(correlationKey);
    return shardOfText(routingText(correlationKey), this.options.shards);
  }

  /** Shards this member owns and runs now, ascending. */
  ownedShards(): number[] {
    return this.member.ownedShards();
  }

  /** The live members as of the last loop pass, sorted. */
  members(): readonly string[] {
    return this.member.members();
  }

  /** The held shards (the inbox is listed only while there are some). */
  private get held(): ReadonlyMap<number, unknown> {
    return this.member.held;
  }

  /** @internal Joins (heartbeat), runs the first pass, starts the loops. Rejects as `openCluster`. */
  /**
   * `start()`: joins the member loop (see `openCluster`). `start(workflow, input, options?)`:
   * starts a run of a workflow function (the `runner` option's `workflows`) in its shard, from
   * any member, as `WorkflowRuntime.start` does, and returns its typed handle; a command like
   * `submit` (TIMEOUT names its id).
   */
  start(): Promise<void>;
  start<I, O>(workflow: Workflow<I, O>, input: I, options?: StartOptions): Promise<WorkflowRun<O>>;
  async start<I, O>(...args: [] | [Workflow<I, O>, I, StartOptions?]): Promise<void | WorkflowRun<O>> {
    if (args.length === 0) return this.join();
    const [workflow, input, options = {}] = args;
    if (!this.options.workflows) throw new InvalidArgumentError('start(workflow, input) needs a cluster whose runner is { workflows: [...] }; this one runs a StepRunner (use submit)', { reason: 'unknown_workflow' });
    this.options.workflows.check(workflow);
    const outcome = await this.submit(startSpec(workflow, input, options), options.commandId === undefined ? undefined : { commandId: options.commandId });
    return new WorkflowRun<O>(this.runSource, outcome.runId, outcome.newlySubmitted, outcome.finished);
  }

  /** The typed handle of a workflow function's run started earlier (by any member); no I/O. */
  workflowRun<I, O>(workflow: Workflow<I, O>, runId: string): WorkflowRun<O> {
    validateRunId(runId);
    this.options.workflows?.check(workflow);
    return new WorkflowRun<O>(this.runSource, runId, false);
  }

  /**
   * The outcome of run `runId`, from any member: read from its shard (the owner's runtime here,
   * else a reader of the shard) until the run has ended and its finished-run record is there
   * (`outcomeRetentionMs` above 0). Rejects with NOT_FOUND for a run that is neither active nor
   * kept, TIMEOUT after `options.timeoutMs`, CANCELLED when `options.signal` aborts.
   */
  async result(runId: string, options: RunResultOptions = {}): Promise<FinishedRun> {
    const shard = this.shardOf(runId);
    const clock = this.options.clock;
    const deadline = options.timeoutMs === undefined ? Infinity : clock.now() + options.timeoutMs;
    let waitMs = this.options.inboxPollMs;
    let missing = 0;
    for (;;) {
      if (options.signal?.aborted) throw new TaqubaError('CANCELLED', `stopped waiting for the run. runId=${runId}`, { details: { runId } });
      const run = await this.readRun(shard, runId, this.localRuntime(shard), undefined, { includeFinished: true });
      if (run !== null && isFinishedRun(run)) return run;
      // A run between its ending and its record is never read as absent (one transaction), so a
      // few misses in a row mean there is no such run.
      missing = run === null ? missing + 1 : 0;
      if (missing >= 3) throw new NotFoundError(`no active run and no kept outcome under this id (never submitted, or its outcome was swept after outcomeRetentionMs). runId=${runId}`, { runId, reason: 'run_not_found' });
      const left = deadline - clock.now();
      if (left <= 0) throw new TaqubaError('TIMEOUT', `the run did not end within ${options.timeoutMs} ms. runId=${runId}`, { details: { runId, timeoutMs: options.timeoutMs } });
      try {
        await clock.sleep(Math.min(waitMs, left), options.signal);
      } catch {
        throw new TaqubaError('CANCELLED', `stopped waiting for the run. runId=${runId}`, { details: { runId } });
      }
      waitMs = Math.min(Math.round(waitMs * 1.5), 1000);
    }
  }

  /** What a `WorkflowRun` handle of this cluster reads through. */
  private get runSource(): WorkflowRunSource {
    return {
      result: (runId, options) => this.result(runId, options),
      readStatus: async (runId) => {
        const shard = this.shardOf(runId);
        const run = await this.readRun(shard, runId, this.localRuntime(shard), undefined, { includeFinished: true });
        if (run === null) return null;
        if (isFinishedRun(run)) return { runId, state: run.status, currentStep: run.finalStep };
        return { runId, state: run.state === 'running' ? 'running' : run.state === 'cancelling' ? 'cancelling' : 'pending', currentStep: run.currentStep };
      },
      cancel: (runId, options) => this.cancel(runId, options),
    };
  }

  private async join(): Promise<void> {
    await this.heartbeat?.join(this.stop.signal);
    try {
      await this.member.start();
    } catch (e) {
      // The keepalive already runs and the first pass may have taken shards: hand them back.
      this.stop.abort();
      await this.member.leave(false).catch(() => undefined);
      throw e;
    }
    this.inboxLoop = this.options.takesShards ? this.runInbox() : Promise.resolve();
  }

  /** Stops this member by itself with `e` (LOCKED: another process has its member id): it leaves, and later calls reject with `e`. */
  private fail(e: TaqubaError): void {
    if (this.failure !== undefined || this.left !== undefined) return;
    this.failure = e;
    this.options.logger.error('cluster member stops: its member id is in use by another process', { member: this.memberId, error: e.message });
    void this.leave().catch(() => undefined);
  }

  /**
   * Applies the commands for the shards this member runs: one listing of every inbox per poll,
   * backing off while nothing comes (on S3 a listing is the costly request).
   */
  private async runInbox(): Promise<void> {
    const o = this.options;
    const signal = this.stop.signal;
    /** Shards whose batches are being applied: one apply per shard at a time, never waited on by the others. */
    const applying = new Set<number>();
    let waitMs = o.inboxPollMs;
    while (!signal.aborted) {
      await o.clock.sleep(waitMs, signal).catch(() => undefined);
      if (signal.aborted) return;
      let found = 0;
      try {
        const byShard = new Map<number, string[]>();
        const root = this.layout.inboxRoot;
        if (this.held.size > 0) {
          for await (const info of this.store.list(root)) {
            const shard = parseInboxKey(info.key.slice(root.length));
            if (shard === undefined || applying.has(shard) || this.localRuntime(shard) === undefined) continue;
            const keys = byShard.get(shard) ?? [];
            keys.push(info.key);
            byShard.set(shard, keys);
          }
        }
        for (const [shard, keys] of byShard) {
          const runtime = this.localRuntime(shard);
          if (!runtime) continue;
          found += keys.length;
          applying.add(shard);
          void applyInbox(this.store, this.layout.shardInbox(shard), keys, { runtime, jobs: this.localJobsRuntime(shard) }, signal)
            .catch((e) => {
              // CLOSED / FENCED: the shard was dropped or handed over mid-batch; its next owner applies the batch.
              const moved = isTaqubaError(e, 'CLOSED') || isTaqubaError(e, 'FENCED');
              if (!signal.aborted) o.logger[moved ? 'debug' : 'warn']('cluster inbox batch failed; retrying', { member: this.memberId, shard, error: (e as Error)?.message });
            })
            .finally(() => applying.delete(shard));
        }
      } catch (e) {
        if (!signal.aborted) o.logger.warn('cluster inbox listing failed; retrying', { member: this.memberId, error: (e as Error)?.message });
      }
      waitMs = found > 0 || applying.size > 0 ? o.inboxPollMs : Math.min(Math.round(waitMs * 1.5), o.inboxPollMs * MAX_BACKOFF_FACTOR);
    }
  }

  /** @internal Tests and benchmarks: how lease renewals went so far, and how often shards moved. */
  renewalStats(): RenewalStats {
    return this.member.renewalStats();
  }

  /**
   * Once per `commandTimeoutMs`, deletes the replies of owned shards that no sender will read:
   * those of batches sent more than twice the timeout ago (plus the clock-skew margin on both
   * clocks and the senders' longest poll backoff).
   */
  private async collectReplies(): Promise<void> {
    const o = this.options;
    const now = o.clock.now();
    if (now - this.repliesCollectedAt < o.commandTimeoutMs) return;
    // Set first: a failed collection waits for the next period (an overlapping one only repeats deletes).
    this.repliesCollectedAt = now;
    const sentBefore = now - 2 * o.commandTimeoutMs - 2 * o.maxClockSkewMs - MAX_BACKOFF_FACTOR * o.inboxPollMs;
    try {
      for (const shard of this.ownedShards()) {
        if (this.stop.signal.aborted) return;
        await collectOrphanReplies(this.store, this.layout.shardInbox(shard), sentBefore);
      }
    } catch (e) {
      if (!this.stop.signal.aborted) o.logger.warn('cluster reply collection failed; retrying next period', { member: this.memberId, error: (e as Error)?.message });
    }
  }

  /** @internal Tests: one member-loop pass now. */
  async passNow(): Promise<void> {
    await this.member.pass();
  }

  /** The local runtime of `shard` when this member owns it and it is open. */
  private localRuntime(shard: number): WorkflowRuntime | undefined {
    return this.member.localRuntime(shard);
  }

  /** The local typed-jobs runtime of `shard` when this member owns it and it is open. */
  private localJobsRuntime(shard: number): WorkflowRuntime | undefined {
    return this.member.localJobsRuntime(shard);
  }

  /** @internal Tests: the open runtime of an owned shard. */
  runtimeOf(shard: number): WorkflowRuntime | undefined {
    return this.localRuntime(shard);
  }

  /** @internal Tests: the queue of an owned shard, also after it was fenced. */
  queueOf(shard: number): Queue | undefined {
    return this.member.queueOf(shard);
  }

  /**
   * Runs `local` on the shard's runtime when this member owns it, else sends `command` through
   * the shard's inbox. A local call that meets FENCED or CLOSED (the shard moved meanwhile) goes
   * through the inbox instead.
   */
  private async route<T>(shard: number, command: RunCommand, options: CommandOptions | undefined, local: (runtime: WorkflowRuntime, once: CommandOptions) => Promise<T>): Promise<T> {
    if (this.left !== undefined) throw this.failure ?? new ClosedError(`cluster member ${this.memberId} has left`);
    // One id for the local call and the inbox, so a local call cut short by a move is applied once.
    const commandId = options?.commandId ?? newCommandId(this.options.clock);
    validateCommandId(commandId);
    const once = { commandId };
    const runtime = this.localRuntime(shard);
    if (runtime) {
      try {
        return await local(runtime, once);
      } catch (e) {
        if (!isTaqubaError(e, 'FENCED') && !isTaqubaError(e, 'CLOSED')) throw e;
      }
    }
    return (await this.sender.send(this.layout.shardInbox(shard), { ...command, commandId })) as T;
  }

  /**
   * Starts a run in its shard, from any member; idempotent on (run id, input) like
   * `WorkflowRuntime.submit`. A spec without a run id gets a fresh one. Rejects like
   * `WorkflowRuntime.submit`, plus TIMEOUT (no owner answered within `commandTimeoutMs`; the
   * submission may still apply) and CLOSED after `leave`. Every call is a command with an id
   * (`options.commandId`, else a fresh one) kept with its effect in the shard: a TIMEOUT names it
   * (`details.commandId`), and sending the same spec again with that id applies it at most once.
   * The same holds for `signal`, `cancel`, `submitJob` and `cancelJob`.
   */
  async submit(spec: RunSpec, options?: CommandOptions): Promise<SubmitOutcome> {
    validateSpec(spec, undefined); // typed errors here, before a command is sent
    const runId = spec.runId ?? this.freshRunIdFor(spec);
    const shard = this.shardOf(runId);
    const full = { ...spec, runId };
    const command = submitCommand(full);
    return this.route(shard, command, options, (rt, once) => rt.submit(full, once));
  }

  /**
   * A fresh run id for `spec`. Flow control keeps a key's state in one shard's store, so a run
   * under a flow key (its `concurrency`, else `debounce`, else `rateLimit` key) gets an id that
   * routes to the key's shard: the key's runs meet there, and its limit holds across the cluster.
   * (A caller-chosen run id places the run by its id: the limit then holds per shard.)
   */
  private freshRunIdFor(spec: RunSpec): string {
    const key = spec.concurrency?.key ?? spec.debounce?.key ?? spec.rateLimit?.key;
    if (key === undefined) return this.nextRunId();
    const shard = shardOfText(key, this.options.shards);
    // A fresh id lands on a given shard with probability 1/shards: a handful of draws.
    for (;;) {
      const runId = this.nextRunId();
      if (shardOfText(runId, this.options.shards) === shard) return runId;
    }
  }

  /**
   * Sends a durable signal to the shard of `correlationKey` (see `shardOfCorrelationKey`).
   * `signal(runId, name, value)`: the signal `name` of a workflow function's run (as
   * `WorkflowRuntime.signal`), routed to the run's shard.
   */
  signal(correlationKey: string, payload: Uint8Array, options?: CommandOptions): Promise<SignalOutcome>;
  signal(runId: string, name: string, value: unknown, options?: CommandOptions): Promise<SignalOutcome>;
  async signal(keyOrRunId: string, payloadOrName: Uint8Array | string, valueOrOptions?: unknown, maybeOptions?: CommandOptions): Promise<SignalOutcome> {
    const { correlationKey, payload, options } = signalArguments(keyOrRunId, payloadOrName, valueOrOptions, maybeOptions);
    const shard = this.shardOfCorrelationKey(correlationKey);
    return this.route(shard, { type: 'signal', correlationKey, payload }, options, (rt, once) => rt.signal(correlationKey, payload, once));
  }

  /** Cancels an active run, from any member (as `WorkflowRuntime.cancel`). */
  async cancel(runId: string, options?: CommandOptions): Promise<boolean> {
    const shard = this.shardOf(runId);
    return this.route(shard, { type: 'cancel', runId }, options, (rt, once) => rt.cancel(runId, once));
  }

  private reader(shard: number, queueName = this.options.runtimeOptions.queueName ?? DEFAULT_QUEUE_NAME): Promise<WorkflowReader> {
    const id = `${shard}/${queueName}`;
    let reader = this.readers.get(id);
    if (!reader) {
      reader = WorkflowReader.open(this.store, this.layout.queuePath(shard), {
        pollIntervalMs: null,
        clock: this.options.clock,
        logger: this.options.logger,
        queueName,
        ...(this.options.queueOptions.payloadPath === undefined ? {} : { payloadPath: this.options.queueOptions.payloadPath }),
      });
      this.readers.set(id, reader);
      reader.catch(() => this.readers.delete(id));
    }
    return reader;
  }

  /** A run of `queueName` in `shard`, from the local runtime or a refreshed reader; null when the shard's engine was never written. */
  private async readRun(shard: number, runId: string, local: WorkflowRuntime | undefined, queueName?: string): Promise<RunDetails | null>;
  private async readRun(shard: number, runId: string, local: WorkflowRuntime | undefined, queueName: string | undefined, finished: FinishedReadOptions): Promise<RunDetails | FinishedRun | null>;
  private async readRun(shard: number, runId: string, local: WorkflowRuntime | undefined, queueName?: string, finished?: FinishedReadOptions): Promise<RunDetails | FinishedRun | null> {
    if (local) return finished ? local.getRun(runId, finished) : local.getRun(runId);
    let reader: WorkflowReader;
    try {
      reader = await this.reader(shard, queueName);
    } catch (e) {
      if (isTaqubaError(e, 'NOT_FOUND')) return null;
      throw e;
    }
    await reader.refresh();
    return finished ? reader.getRun(runId, finished) : reader.getRun(runId);
  }

  private get jobOutcomes(): ClusterJobOutcomes {
    return new ClusterJobOutcomes({
      store: this.store,
      clock: this.options.clock,
      pollMs: this.options.inboxPollMs,
      memoPrefix: (id) => this.layout.jobsMemoPrefix(shardOfText(id, this.options.shards)),
      status: (id) => {
        const shard = shardOfText(id, this.options.shards);
        return this.statusIn(shard, id, this.localJobsRuntime(shard), DEFAULT_JOBS_QUEUE_NAME);
      },
      finished: async (id) => {
        const shard = shardOfText(id, this.options.shards);
        const run = await this.readRun(shard, id, this.localJobsRuntime(shard), DEFAULT_JOBS_QUEUE_NAME, { includeFinished: true });
        return run !== null && isFinishedRun(run) ? run : null;
      },
      cancel: (id) => this.cancelJob(id),
    });
  }

  /**
   * Submits a typed job (one of the `jobs` option) to its shard, from any member; like
   * `JobRunner.submit` (idempotent on the job's key). Await `handle.result()` on any member.
   * Rejects with INVALID_ARGUMENT (`unregistered_job`, `invalid_job_input`, `invalid_spec`),
   * INPUT_MISMATCH, TIMEOUT, CLOSED or store errors.
   */
  async submitJob<I, O, E>(job: Job<I, O, E>, input: I, options: JobSubmitOptions & CommandOptions = {}): Promise<JobHandle<O, E>> {
    const { commandId, ...jobOptions } = options;
    const prepared = await prepareJob(this.options.jobs, job, input, jobOptions, this.nextRunId);
    const outcomes = this.jobOutcomes;
    const done = await finishedJob<O, E>(outcomes, job, prepared);
    if (done) return done;
    const shard = shardOfText(prepared.runId, this.options.shards);
    const spec = { runId: prepared.runId, input: prepared.input, ...prepared.spec };
    const command: RunCommand = { type: 'submitJob', ...spec };
    // The jobs runtime opens with the shard's; CLOSED sends the submission through the inbox.
    const outcome = await this.route(shard, command, commandId === undefined ? undefined : { commandId }, async (_rt, once) => {
      const jobs = this.localJobsRuntime(shard);
      if (!jobs) throw new ClosedError(`shard ${shard} has no jobs runtime here`);
      return jobs.submit(spec, once);
    });
    return new JobHandle<O, E>(outcomes, job, outcome.runId, outcome.newlySubmitted);
  }

  /**
   * Cancels a pending or running typed job, from any member (as `JobRunner.cancel`): its
   * `ctx.signal` fires and the run ends cancelled, so `result()` rejects with JOB_FAILED
   * (`cancelled`). Resolves false when the job is not active (finished, cancelled, unknown).
   * Rejects with INVALID_ARGUMENT (bad id, or a member without the jobs option), TIMEOUT, CLOSED
   * after `leave`, or store errors.
   */
  async cancelJob(id: string, options?: CommandOptions): Promise<boolean> {
    validateRunId(id);
    const shard = shardOfText(id, this.options.shards);
    return this.route(shard, { type: 'cancelJob', runId: id }, options, async (_rt, once) => {
      const jobs = this.localJobsRuntime(shard);
      if (!jobs) throw new ClosedError(`shard ${shard} has no jobs runtime here`);
      return jobs.cancel(id, once);
    });
  }

  /** A handle on a job submitted earlier (by any member), typed by `job`; no I/O. INVALID_ARGUMENT for an unknown job or a bad id. */
  jobHandle<I, O, E>(job: Job<I, O, E>, id: string): JobHandle<O, E> {
    if (typeof job?.name !== 'string' || this.options.jobs.get(job.name) !== job) throw new InvalidArgumentError(`job is not in this cluster's jobs option. job=${String(job?.name)}`, { reason: 'unregistered_job' });
    validateRunId(id);
    return new JobHandle<O, E>(this.jobOutcomes, job, id, false);
  }

  /**
   * An active run's status from any member: the owner's runtime here, else a read-only reader of
   * the shard, refreshed first. Null for an unknown or terminated run (also a run submitted whose
   * shard's engine was never written yet).
   */
  readStatus(runId: string): Promise<RunStatus | null> {
    const shard = this.shardOf(runId);
    return this.statusIn(shard, runId, this.localRuntime(shard));
  }

  /** A run's status in `shard`: from `local` when this member runs the shard, else from its record through a reader. */
  private async statusIn(shard: number, runId: string, local: WorkflowRuntime | undefined, queueName?: string): Promise<RunStatus | null> {
    if (local) return local.readStatus(runId);
    const details = await this.readRun(shard, runId, undefined, queueName);
    if (details === null) return null;
    const state = details.state === 'running' ? 'running' : details.state === 'cancelling' ? 'cancelling' : 'pending';
    return { runId, state, currentStep: details.currentStep };
  }

  /** An active run in detail (as `WorkflowRuntime.getRun`), from any member. */
  async getRun(runId: string): Promise<RunDetails | null> {
    const shard = this.shardOf(runId);
    return this.readRun(shard, runId, this.localRuntime(shard));
  }

  /**
   * The cron schedules of every shard (the `schedules` option's, each on its shard), in name
   * order, with their next and last firing, read from any member (refreshed readers of the
   * shards' engines; a shard never written has none). CORRUPT_DATA, CLOSED after `leave`, store errors.
   */
  async listSchedules(): Promise<ScheduleInfo[]> {
    if (this.left !== undefined) throw this.failure ?? new ClosedError(`cluster member ${this.memberId} has left`);
    const all: ScheduleInfo[] = [];
    for (let shard = 0; shard < this.options.shards; shard++) {
      let reader: WorkflowReader;
      try {
        reader = await this.reader(shard);
      } catch (e) {
        if (isTaqubaError(e, 'NOT_FOUND')) continue;
        throw e;
      }
      await reader.refresh();
      all.push(...(await listSchedules(reader.queue)));
    }
    return all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** @internal Tests: stop the member loop only, keeping the shards' workers running (a zombie). */
  halt(): void {
    this.stop.abort();
  }

  /**
   * Leaves the cluster cleanly: stops the member loop, hands every shard over (its in-flight
   * steps finish, its engine closes, a release record lets the next owner take it at once), and
   * removes the heartbeat. Safe to call twice. After a member stopped by itself (LOCKED), it has
   * already left: this resolves, and the heartbeat (now the other process's) stays.
   */
  leave(): Promise<void> {
    this.left ??= (async () => {
      this.stop.abort();
      await this.inboxLoop;
      await this.member.leave(this.failure !== undefined);
      for (const r of this.readers.values()) await r.then((x) => x.close()).catch(() => undefined);
    })();
    return this.left;
  }

  /** Same as `leave`. */
  close(): Promise<void> {
    return this.leave();
  }
}
