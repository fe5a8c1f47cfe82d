/**
 * `WorkflowRuntime`: durable multi-step runs on a `Queue`. A run is a chain of steps, each one
 * queue job; the `StepRunner` decides after each step what happens next. Everything between steps
 * (the next payload, the schedule, signals, KV effects, the terminal outcome) is committed in the
 * queue's transactions, so a crash at any point resumes from the last committed step.
 *
 * Delivery is at-least-once everywhere: a step can run again after a crash or an expired lease,
 * and the terminal hook can see one outcome twice. Duplicates are made harmless by dedup keys
 * (one waiting job per step, one notification per run), idempotent submission, the memo and the
 * optional step-output replay.
 *
 * Single process: submitter, workers, signaller and canceller share one `Queue` handle (the
 * store's single writer). `cancel` and `readStatus` find every active run of this runtime's
 * queue name (through its durable records when this instance has not seen it); the synchronous
 * `status` sees the runs this instance submitted or has claimed a step of.
 *
 * Several runtimes on one handle: each acts only on runs whose step job is on its own queue name
 * (cancel, status and the run queries treat another queue name's run as unknown). Run ids, caller
 * KV and signal correlation keys are one namespace for the whole handle, and the per-key signal
 * lock is shared by every runtime on the handle (signals.ts), so a signal sent through any of them
 * wakes the waiter of its key.
 */
import type { Clock } from '../clock.js';
import { InvalidArgumentError } from '../errors.js';
import type { LogSink } from '../logger.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { Queue } from '../queue/index.js';
import { runClaimLoop } from '../queue/workers/worker.js';
import { cancelRun, readRunStatus } from './runs/cancellation.js';
import type { RuntimeContext } from './context.js';
import { show } from '../show.js';
import { validateRunId } from './validation.js';
import { getRunOrFinished, listDeadSteps, listRuns, type DeadStep, type DeadStepListOptions, type RunDetails, type RunListOptions, type RunListPage } from './history/inspection.js';
import { attachFinishedRuns, wantsFinished, type FinishedReadOptions, type FinishedRun, type FinishedRunListOptions, type FinishedRunListPage } from './history/finished-runs.js';
import { awaitRunResult, type RunResultOptions } from './runs/run-result.js';
import { readDurableRun } from './runs/durable-run.js';
import { getRunTimeline, type RunTimeline } from './history/run-timeline.js';
import { retryDeadStep, type DeadStepRetry } from './steps/dead-step-retry.js';
import { KeyedMutex } from '../keyed-mutex.js';
import { MemoStore } from './steps/memo.js';
import { reconcileDeadSteps, runReconcileLoop } from './runs/reconciler.js';
import { RunRegistry, type RunState, type RunStatus } from './registry.js';
import { sweepIntervalFor, runPeriodically, sweepExpiredFinishedRuns, sweepExpiredMemos } from './history/retention-sweeper.js';
import { resolveRuntimeOptions, RUNNER_WRAPPER, type HostRuntimeOptions, type ResolvedRuntimeOptions, type WorkflowRuntimeOptions } from './runtime-options.js';
import { clearBufferedSignal, sendSignal, signalLocksOf, type SignalOutcome } from './runs/signals.js';
import { endingLocksOf } from './runs/termination.js';
import { asStepRunnerObject, type StepRunner } from './steps/step.js';
import { processDelivery } from './steps/step-processor.js';
import { submitRun, type RunSpec, type SubmitOutcome } from './runs/submit.js';
import { traceHook, tracedSignal, tracedSubmit } from './runs/run-tracing.js';
import { traceRunner } from './steps/step-tracing.js';
import { applyCommand, sweepCommandAnswers, type CommandOptions } from './commands/ledger.js';
import { runtimeInbox, serveInbox } from './commands/runtime-inbox.js';
import { RATE_SWEEP_INTERVAL_MS, sweepExpiredRateLimits } from './flow/rate-limit.js';

import { NoopTerminalHook, type TerminalHook } from './runs/terminal-hook.js';
import { isWorkflowSet, WorkflowRegistry, type Workflow, type WorkflowSet } from './functions/define.js';
import { FunctionRunner, signalArguments } from './functions/function-runner.js';
import { runOfFunctionSignalKey } from './functions/signal-key.js';
import { ChildOutcomeHook } from './functions/children.js';
import { functionRunLeftovers } from './functions/history.js';
import { signalWatchOf } from './runs/signal-watch.js';
import { checkStartSpec, startSpec, WorkflowRun, type StartOptions } from './functions/workflow-run.js';
import { spawnRunner, type RunnerHandle } from './runner-handle.js';
import { exportRun, type ExportRunOptions } from './archive/export-run.js';
import { importRun, type ImportRunOptions, type ImportRunOutcome } from './archive/import-run.js';
import { readEndedStatus } from './archive/moved-runs.js';

/** Replies nobody fetched this long after their batch was sent are deleted (senders wait far less). */
const ORPHAN_REPLY_MS = 10 * 60_000;

export type { RunnerHandle } from './runner-handle.js';

export class WorkflowRuntime {
  private readonly ctx: RuntimeContext;
  private readonly options: ResolvedRuntimeOptions;
  private readonly submitLocks = new KeyedMutex();
  /** The workflow functions this runtime runs (a runtime built with `{ workflows }`). */
  private readonly functions: WorkflowRegistry | undefined;

  /**
   * Builds a runtime over `queue` (steps and notifications go to `options.queueName`) with memo
   * entries in `store`. Pure: no I/O until `submit` or `run`. Throws INVALID_CONFIG for bad
   * options, INVALID_ARGUMENT for a runner or hook of the wrong shape. `runner` is either
   * `{ workflows: [...] }` (workflow functions made with `defineWorkflow`, started with `start`)
   * or a `StepRunner`: a function `(step) => Promise<StepOutcome>` or an object with `runStep`.
   * The hook defaults to none.
   * @example
   * const runtime = new WorkflowRuntime(queue, store, async (s) => StepOutcome.succeed(s.payload), new NoopTerminalHook());
   * const handle = runtime.spawn();
   * await runtime.submit({ input: utf8('hello') });
   * await handle.shutdown();
   */
  constructor(queue: Queue, store: ObjectStore, runner: StepRunner | WorkflowSet, hook: TerminalHook = new NoopTerminalHook(), options: WorkflowRuntimeOptions = {}) {
    const resolved = resolveRuntimeOptions(queue, options);
    this.functions = isWorkflowSet(runner) ? new WorkflowRegistry(runner) : undefined;
    const built = this.functions ? new FunctionRunner(this.functions, () => this.ctx, (spec) => this.submit(spec)) : asStepRunnerObject(runner);
    const wrap = (options as HostRuntimeOptions | undefined)?.[RUNNER_WRAPPER];
    const stepRunner = wrap ? wrap(built) : built;
    if (typeof hook?.onTermination !== 'function') throw new InvalidArgumentError(`hook must implement onTermination(outcome, effects). hook=${show(hook)}`, { reason: 'invalid_hook' });
    const logger = resolved.logger;
    const traced = (h: TerminalHook): TerminalHook => (resolved.tracer === undefined ? h : traceHook(h, resolved.tracer, resolved.queueName));
    const log: LogSink = {
      debug: (m, d) => logger.debug(`[workflow] ${m}`, d),
      info: (m, d) => logger.info(`[workflow] ${m}`, d),
      warn: (m, d) => logger.warn(`[workflow] ${m}`, d),
      error: (m, d) => logger.error(`[workflow] ${m}`, d),
    };
    this.options = resolved;
    this.ctx = {
      queue,
      queueName: resolved.queueName,
      store,
      clock: resolved.clock,
      memo: new MemoStore(store, resolved.memoPrefix, log.warn),
      runner: resolved.tracer === undefined ? stepRunner : traceRunner(stepRunner, resolved.tracer, resolved.queueName, this.functions !== undefined),
      // A runtime of workflow functions also sends each child run's outcome to its parent.
      hook: traced(this.functions ? new ChildOutcomeHook(hook, (runId, name, value) => this.signal(runId, name, value)) : hook),
      registry: new RunRegistry(),
      signalLocks: signalLocksOf(queue),
      endingLocks: endingLocksOf(queue),
      signalWatch: signalWatchOf(queue),
      memoRetentionMs: resolved.memoRetentionMs,
      stepOutputReplay: resolved.stepOutputReplay,
      log,
      warn: log.warn,
      tracer: resolved.tracer,
      ...(this.functions ? { endingDeletes: (runId: string, historyStaged: boolean) => this.endFunctionRun(runId, historyStaged), signalRunOf: runOfFunctionSignalKey } : {}),
    };
    attachFinishedRuns(this.ctx, resolved.outcomeRetentionMs, resolved.runIdReuse);
  }

  /**
   * The history and buffered signals a function run's ending deletes; the children it still
   * waits for are cancelled first (a cancelled parent takes its children with it).
   */
  private async endFunctionRun(runId: string, historyStaged: boolean): Promise<Uint8Array[]> {
    const noSignals = this.ctx.signalWatch.ending(runId);
    const { keys, pendingChildren } = await functionRunLeftovers(this.ctx.queue, this.ctx.queueName, runId, { historyStaged, noSignals });
    for (const child of pendingChildren) {
      await this.cancel(child).catch((e: unknown) => this.ctx.warn(`cancelling a child of an ending run failed. runId=${runId} child=${child}`, e));
    }
    return keys;
  }

  /** The queue name of this runtime's steps and notifications. */
  get queueName(): string {
    return this.ctx.queueName;
  }

  /** The clock every timestamp of this runtime comes from. */
  get clock(): Clock {
    return this.ctx.clock;
  }

  /** @internal How often the runtime's loops look again when nothing wakes them (`pollIntervalMs`, resolved). */
  get pollIntervalMs(): number {
    return this.options.pollIntervalMs;
  }

  /** The memo store (for `clearMemosForRun` and custom retention policies). */
  get memoStore(): MemoStore {
    return this.ctx.memo;
  }

  /**
   * Starts a run, or recognises a duplicate (same run id and input while the run is active:
   * `newlySubmitted` false, the run's current job). Durable when it resolves.
   * Rejects with INVALID_ARGUMENT (run id, reserved header or KV key, oversized KV value, bad
   * spec fields; on a runtime of workflow functions an input that is not the start of a
   * registered workflow: `not_a_workflow_run`, `unknown_workflow`), INPUT_MISMATCH (the active
   * run under this id has another input), CORRUPT_DATA
   * (a run record without its pointer, or undecodable), CLOSED, or store errors.
   * `options.commandId` makes the call a command applied once: called again with the same id
   * (a retry after a lost answer or a TIMEOUT), it answers what the first call answered and
   * changes nothing, even after the run ended. The same option is on `signal` and `cancel`.
   */
  submit(spec: RunSpec, options?: CommandOptions): Promise<SubmitOutcome> {
    if (this.functions) {
      // A runtime of workflow functions runs starts of its own workflows only (see `start`).
      try {
        checkStartSpec(this.functions, spec);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    const submit = (traced: RunSpec): Promise<SubmitOutcome> =>
      applyCommand(this.ctx.queue, this.ctx.clock, options, (record) => submitRun(this.ctx, this.submitLocks, traced, this.options.stepMaxAttempts, record));
    const tracer = this.options.tracer;
    return tracer === undefined ? submit(spec) : tracedSubmit(tracer, this.ctx.queueName, this.functions !== undefined, spec, submit);
  }

  /**
   * Cancels an active run. A waiting step (pending, scheduled after a delay or a retry backoff,
   * or waiting on a signal) is removed and the run's termination (record deleted, marker,
   * notification) commits with the removal, before this resolves. A running step sees
   * `step.signal` fire; whatever it returns is discarded (a runner `cancel` keeps its reason) and
   * the run settles cancelled when it returns; `status` shows `cancelling` meanwhile.
   * Runs this instance has not seen (submitted by an earlier process, before a restart or a tab
   * takeover) are found through their durable run record and step pointer (see cancellation.ts
   * for why this goes beyond the reference's in-process scope).
   * Resolves false for an unknown or already terminated run, for a run whose step was
   * dead-lettered (it has failed), and for another runtime's run (its step job is on another
   * queue name of the same queue handle). Rejects with INVALID_ARGUMENT (run id), CORRUPT_DATA (the
   * run's records are inconsistent or undecodable), CLOSED or store errors.
   */
  async cancel(runId: string, options?: CommandOptions): Promise<boolean> {
    validateRunId(runId);
    return applyCommand(this.ctx.queue, this.ctx.clock, options, (record) => cancelRun(this.ctx, runId, record));
  }

  /**
   * What this instance knows about an active run, or null. Synchronous, so it answers from the
   * in-process registry only: a run of an earlier process shows up once one of its steps is
   * claimed here, and a finished run is always null (its record is in the store: use
   * `readStatus(id, { includeFinished: true })` or `result`). `readStatus` also reads the store.
   * INVALID_ARGUMENT for a bad run id.
   */
  status(runId: string): (RunStatus & { readonly state: RunState }) | null {
    validateRunId(runId);
    return this.ctx.registry.status(runId);
  }

  /**
   * The status of an active run, from the registry when this instance knows the run, else from
   * the store (run record, step pointer and the step's job): `pending` while the step waits
   * (claimable, delayed, backing off or waiting on a signal), `running` or `cancelling` while it
   * is claimed. Null for an unknown or terminated run, for a run whose step was dead-lettered
   * (it has failed), and for another runtime's run (another queue name).
   * With `{ includeFinished: true }`, a run that ended within `outcomeRetentionMs` reports how:
   * `succeeded`, `failed` or `cancelled`, `currentStep` the step that ended it (null again once
   * the record was swept); a run handed off from here (`exportRun` with `handOff`) `moved`, with
   * `movedTo`. Rejects with INVALID_ARGUMENT (run id, options), CORRUPT_DATA, CLOSED or
   * store errors.
   */
  async readStatus(runId: string, options?: FinishedReadOptions): Promise<RunStatus | null> {
    validateRunId(runId);
    const includeFinished = wantsFinished(options);
    const live = await readRunStatus(this.ctx, runId);
    if (live !== null || !includeFinished) return live;
    // A dead step's run has failed but its ending is not committed yet (reconciliation does it):
    // an earlier run's record under the same id would be a wrong answer.
    if ((await readDurableRun(this.ctx.queue, runId, this.ctx.queueName)).type === 'dead') return null;
    return readEndedStatus(this.ctx.queue, this.ctx.queueName, runId);
  }

  /**
   * The outcome of run `runId`: at once for a run that ended within `outcomeRetentionMs`,
   * otherwise when the active run ends (a cancelled, failed or succeeded run alike: look at
   * `status`). An id submitted again after it finished is awaited anew. Waiting happens in this
   * process (the worker running the run shares this runtime's queue handle).
   * Rejects with NOT_FOUND when no run of this id is active here and no finished-run record is
   * kept (never submitted to this runtime, swept after the retention window, or retention 0),
   * TIMEOUT after `timeoutMs`, CANCELLED when `signal` aborts, INVALID_ARGUMENT (run id,
   * options), CORRUPT_DATA, CLOSED or store errors.
   * @example
   * const { runId } = await runtime.submit({ input });
   * const outcome = await runtime.result(runId, { timeoutMs: 60_000 });
   * if (outcome.status === 'succeeded') console.log(outcome.result);
   */
  result(runId: string, options?: RunResultOptions): Promise<FinishedRun> {
    return awaitRunResult(this.ctx, runId, options, this.options.pollIntervalMs);
  }

  /**
   * Finished runs still kept (`outcomeRetentionMs`) that ended in `status` (one terminal state or
   * several), in run-id order, one page; `nextCursor` as below. An id active again is not listed.
   * Rejects with INVALID_ARGUMENT (limit, status mixing active and terminal states, cursor),
   * CORRUPT_DATA (an undecodable record), CLOSED or store errors.
   */
  listRuns(options: FinishedRunListOptions): Promise<FinishedRunListPage>;
  /**
   * Active runs (those with a run record) in run-id order, one page, from the store: every run
   * of this runtime's queue name, also those an earlier process submitted (other runtimes' runs
   * on the same queue handle are skipped). `status` keeps only runs in those
   * states (the page may then read many more runs than it returns). Pass `nextCursor` back as
   * `cursor` for the next page. The same query is on `WorkflowReader` for other processes.
   * Rejects with INVALID_ARGUMENT (limit, status, cursor), CORRUPT_DATA (an undecodable run
   * record or step pointer), CLOSED or store errors.
   * @example
   * let cursor: Uint8Array | undefined;
   * do {
   *   const page = await runtime.listRuns({ status: 'waiting-for-signal', cursor });
   *   for (const run of page.runs) console.log(run.runId, run.currentStep);
   *   cursor = page.nextCursor;
   * } while (cursor);
   */
  listRuns(options?: RunListOptions): Promise<RunListPage>;
  listRuns(options?: RunListOptions | FinishedRunListOptions): Promise<RunListPage | FinishedRunListPage> {
    return listRuns(this.ctx.queue, this.ctx.queueName, options);
  }

  /**
   * With `{ includeFinished: true }`: the active run as below, else the run's finished-run record
   * (`FinishedRun`: how and when it ended, its result or error) while `outcomeRetentionMs` keeps
   * it; tell the two apart with `isFinishedRun`. Also INVALID_ARGUMENT for bad options.
   */
  getRun(runId: string, options: FinishedReadOptions): Promise<RunDetails | FinishedRun | null>;
  /**
   * One active run as the store records it: its state (telling a signal wait from a timer), the
   * step reached, that step's attempts, interruptions, last error and attempt history, and what it
   * waits for. Null for an unknown or terminated run, and for another runtime's run (another
   * queue name). Unlike `readStatus` it does not consult this
   * instance's registry (so a cancel requested of a step not yet claimed shows once its job is
   * flagged). Rejects with INVALID_ARGUMENT (run id), CORRUPT_DATA (undecodable or inconsistent
   * records), CLOSED or store errors.
   */
  getRun(runId: string): Promise<RunDetails | null>;
  async getRun(runId: string, options?: FinishedReadOptions): Promise<RunDetails | FinishedRun | null> {
    return getRunOrFinished(this.ctx.queue, this.ctx.queueName, runId, wantsFinished(options));
  }

  /**
   * Everything the store still holds about one run, active or terminated, step by step: its
   * jobs and their tries, signals waited for and what arrived, memo entries, the step outcomes and
   * KV effects (with step-output replay on), the terminal outcome (see `RunTimeline`). Never
   * null: an unknown run has status `unknown`. The same query is on `WorkflowReader`.
   */
  getRunTimeline(runId: string, options: { readonly scanLimit?: number } = {}): Promise<RunTimeline> {
    return getRunTimeline(this.ctx.queue, this.ctx.queueName, runId, { store: this.ctx.store, memoPrefix: this.ctx.memo.prefix, scanLimit: options.scanLimit });
  }

  /**
   * Requeues a dead job of this runtime's queue with a fresh attempt budget: a terminal
   * notification (the hook is called again), a step of a run that is still active (the run
   * resumes), a step whose run ended with it (the run is revived: listed and queried as active
   * again, and its hook hears its next ending), or a job that is not a step. Rejects with
   * CONFLICT (reason `run_resubmitted`) when the run id was submitted again since, NOT_FOUND (no
   * such dead job on this queue), CORRUPT_DATA, INVALID_ARGUMENT, CLOSED or store errors.
   * Resolves with what was requeued.
   */
  retryDeadStep(jobId: string, options?: CommandOptions): Promise<DeadStepRetry> {
    return applyCommand(this.ctx.queue, this.ctx.clock, options, (record) => retryDeadStep(this.ctx.queue, this.ctx.queueName, jobId, this.ctx.clock.now(), record));
  }

  /**
   * One page of this runtime queue's dead jobs (steps out of attempts or failed permanently,
   * failed notifications), oldest first; pass the last `jobId` as `afterJobId` for the next page.
   * A job whose payload object is unreadable is listed with `payloadError`. Rejects with
   * INVALID_ARGUMENT (limit outside 1..1000, bad job id), CLOSED or store errors.
   */
  listDeadSteps(options?: DeadStepListOptions): Promise<DeadStep[]> {
    return listDeadSteps(this.ctx.queue, this.ctx.queueName, options);
  }

  /**
   * Sends a durable signal: wakes the run waiting on `correlationKey` (`delivered`), or stores it
   * for the next waiter of that key, replacing any earlier buffered one (`buffered`).
   * Rejects with INVALID_ARGUMENT (empty key, payload not bytes or over the KV value cap),
   * CLOSED, or store errors.
   *
   * `signal(runId, name, value)`: the signal `name` of a workflow function's run, which its
   * `ctx.waitForSignal(name)` receives as `value` (any value the codec stores); sent before the
   * wait, it is kept for it. On a runtime of workflow functions, a signal to `<runId>#<name>` (in
   * either form) is kept only while the run is active: for a run that has ended or not started it
   * answers `run-not-active` and keeps nothing, so a later run under the id never receives it.
   */
  signal(correlationKey: string, payload: Uint8Array, options?: CommandOptions): Promise<SignalOutcome>;
  signal(runId: string, name: string, value: unknown, options?: CommandOptions): Promise<SignalOutcome>;
  async signal(keyOrRunId: string, payloadOrName: Uint8Array | string, valueOrOptions?: unknown, maybeOptions?: CommandOptions): Promise<SignalOutcome> {
    const { correlationKey, payload, options } = signalArguments(keyOrRunId, payloadOrName, valueOrOptions, maybeOptions);
    const send = (): Promise<SignalOutcome> => applyCommand(this.ctx.queue, this.ctx.clock, options, (record) => sendSignal(this.ctx, correlationKey, payload, record));
    const tracer = this.options.tracer;
    return tracer === undefined ? send() : tracedSignal(tracer, this.ctx.queueName, correlationKey, send);
  }

  /**
   * Starts a run of a workflow function registered on this runtime, and returns its typed handle.
   * Idempotent like `submit`: the same run id and input answer with the run already there
   * (`newlySubmitted` false), another input with INPUT_MISMATCH. Rejects with INVALID_ARGUMENT
   * (reason `unknown_workflow` for a workflow this runtime was not built with, `unstorable_input`
   * for an input the value codec cannot store, or a bad option), CLOSED, or store errors.
   */
  async start<I, O>(workflow: Workflow<I, O>, input: I, options: StartOptions = {}): Promise<WorkflowRun<O>> {
    if (!this.functions) throw new InvalidArgumentError('start needs a runtime built with { workflows: [...] }; this one runs a StepRunner (use submit)', { reason: 'unknown_workflow' });
    this.functions.check(workflow);
    const spec = startSpec(workflow, input, options);
    const outcome = await this.submit(spec, options.commandId === undefined ? undefined : { commandId: options.commandId });
    return new WorkflowRun<O>(this, outcome.runId, outcome.newlySubmitted, outcome.finished);
  }

  /** The typed handle of a run of `workflow` started earlier (by any process); nothing is read until it is used. */
  workflowRun<I, O>(workflow: Workflow<I, O>, runId: string): WorkflowRun<O> {
    validateRunId(runId);
    this.functions?.check(workflow);
    return new WorkflowRun<O>(this, runId, false);
  }

  /**
   * The run as one portable archive (docs/rfcs/0004-run-archive.md): its records, current step,
   * memo, function history, buffered signals and the caller-KV `kvKeys` it names; `importRun` in
   * any store continues it. A copy by default (nothing changes here; a running step is copied as
   * waiting). With `handOff: true` the run moves: in the transaction that takes its step job out,
   * this store stops running it and keeps where it went (`to`), answered by `readStatus(id,
   * { includeFinished: true })` as `moved`; only between steps, and asked again after a lost
   * answer it gives the same archive. Rejects with NOT_FOUND (`run_not_found`, `run_moved`),
   * CONFLICT (`step_running`, `step_dead`, `child_run`, `pending_children`, `run_moving`),
   * INVALID_ARGUMENT, CORRUPT_DATA, CLOSED or store errors.
   * @example
   * const archive = await runtime.exportRun(runId, { handOff: true, to: 'https://backend.example' });
   * await backendRuntime.importRun(archive); // the run continues there, where it stopped
   */
  exportRun(runId: string, options?: ExportRunOptions): Promise<Uint8Array> {
    return exportRun(this.ctx, runId, options);
  }

  /**
   * Continues an exported run here, at the step it left at, in one transaction with its step job.
   * Importing an archive again answers the first import (`newlyImported` false). A hand-off's
   * archive imports under its run id, a copy under a new one, unless `runId` says. Rejects with
   * CORRUPT_DATA (a damaged archive), INVALID_ARGUMENT (`archive_version`: a newer format, naming
   * both; `archive_kind`: a StepRunner's run on a runtime of workflow functions), ALREADY_EXISTS
   * (`run_exists`), CONFLICT (`archive_imported`, `signal_key_in_use`), CLOSED or store errors.
   */
  importRun(archive: Uint8Array, options?: ImportRunOptions): Promise<ImportRunOutcome> {
    return importRun(this.ctx, this.submitLocks, archive, options, this.functions !== undefined);
  }

  /** Discards the buffered signal of `correlationKey`; false when there was none. */
  clearSignal(correlationKey: string): Promise<boolean> {
    return clearBufferedSignal(this.ctx, correlationKey);
  }

  /**
   * Runs the worker until `signal` aborts: steps and notifications, plus the dead-step
   * reconciliation, the command inbox other processes send to (unless `commandPollMs` is null),
   * and the retention sweeps (memos with memo retention, finished runs and command answers with a
   * finite retention, rate-limit records past their period) in the background. On abort it
   * stops claiming, waits for in-flight work and the background tasks, and resolves. Rejects when
   * claiming fails (CLOSED, FENCED, store errors), after the same wait.
   */
  async run(signal?: AbortSignal): Promise<void> {
    const stop = new AbortController();
    const forward = (): void => stop.abort();
    if (signal?.aborted) stop.abort();
    signal?.addEventListener('abort', forward, { once: true });
    const background: Promise<void>[] = [runReconcileLoop(this.ctx, this.options.pollIntervalMs, stop.signal)];
    const retention = this.ctx.memoRetentionMs;
    if (retention !== null) background.push(runPeriodically(this.ctx, retention, stop.signal, 'memo retention sweep', () => sweepExpiredMemos(this.ctx, retention)));
    background.push(runPeriodically(this.ctx, RATE_SWEEP_INTERVAL_MS, stop.signal, 'rate-limit sweep', () => sweepExpiredRateLimits(this.ctx)));
    if (this.options.commandPollMs !== null) {
      const inbox = runtimeInbox(this.ctx.queue.path, this.ctx.queueName);
      const serve = { clock: this.ctx.clock, pollMs: this.options.commandPollMs, orphanAfterMs: ORPHAN_REPLY_MS, warn: this.ctx.warn };
      background.push(serveInbox(this.ctx.store, inbox, { runtime: this, jobs: undefined }, serve, stop.signal));
    }
    const outcomes = this.options.outcomeRetentionMs;
    if (outcomes > 0 && Number.isFinite(outcomes)) {
      background.push(runPeriodically(this.ctx, sweepIntervalFor(outcomes), stop.signal, 'finished-run retention sweep', () => sweepExpiredFinishedRuns(this.ctx, outcomes)));
    }
    const answers = this.options.commandRetentionMs;
    if (Number.isFinite(answers)) {
      const sweep = (): Promise<number> => sweepCommandAnswers(this.ctx.queue, this.ctx.clock.now() - answers);
      background.push(runPeriodically(this.ctx, sweepIntervalFor(answers), stop.signal, 'command answer retention sweep', sweep));
    }
    try {
      // The queue's worker loop: a step (or notification) holds its slot while the runner (or
      // hook) runs, and frees it before its settlement commits.
      await runClaimLoop(this.ctx.queue, this.ctx.queueName, this.options.maxConcurrentSteps, this.options.pollIntervalMs, stop.signal, (claim, handled, resume, slot) =>
        processDelivery(this.ctx, claim, handled, stop.signal, resume, slot),
      );
    } finally {
      stop.abort();
      signal?.removeEventListener('abort', forward);
      await Promise.allSettled(background);
    }
  }

  /** `run` in the background; `shutdown()` stops it and waits. */
  spawn(signal?: AbortSignal): RunnerHandle {
    return spawnRunner((stop) => this.run(stop), signal);
  }


  /** Runs one memo-retention pass now (a no-op returning 0 without retention). Returns runs cleared. */
  async sweepMemosNow(): Promise<number> {
    if (this.ctx.memoRetentionMs === null) return 0;
    return sweepExpiredMemos(this.ctx, this.ctx.memoRetentionMs);
  }

  /**
   * Runs one finished-run retention pass now: deletes the records of runs that ended more than
   * `outcomeRetentionMs` ago (0 with retention off or infinite). Returns records deleted.
   * Rejects with CLOSED or store errors.
   */
  sweepFinishedRunsNow(): Promise<number> {
    return sweepExpiredFinishedRuns(this.ctx, this.options.outcomeRetentionMs);
  }

  /** Runs one dead-step reconciliation pass now. Returns runs terminated. */
  reconcileNow(): Promise<number> {
    return reconcileDeadSteps(this.ctx);
  }

  /** @internal Tests: run-id locks currently held. */
  get submitLocksInUse(): number {
    return this.submitLocks.size;
  }
}
