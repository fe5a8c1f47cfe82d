/**
 * `WorkflowContext`: what a workflow function calls, and `Execution`, its implementation for one
 * delivery of the run's underlying step.
 *
 * Every `ctx` operation takes the next position of the run's history (history.ts) at the moment
 * it is called, so the positions follow the order of the calls, also for steps run in parallel.
 * A position already recorded is answered from the history (a replay), after checking that the
 * call is the one recorded there (else NON_DETERMINISTIC); a new one runs and is recorded before
 * its promise resolves.
 *
 * Durable sleeps and signal waits suspend the function: once one is pending and no step is
 * running, the execution halts with the continuation to commit (a delayed or signal-triggered
 * next underlying step), and the function's pending promises are abandoned. The next delivery
 * replays the function from the top. Without sleeps or waits the function runs to its end in one
 * delivery: the cost of a step does not grow with the history.
 */
import { decodeValue, encodeValue } from '../../codec.js';
import type { Clock } from '../../clock.js';
import { InvalidArgumentError, isTaqubaError, TaqubaError } from '../../errors.js';
import type { LogSink } from '../../logger.js';
import { MAX_KV_VALUE_SIZE, type Queue } from '../../queue/index.js';
import { takeSlotBack, withSlotLent, type HandlerSlot } from '../../queue/workers/handler-slots.js';
import { show } from '../../show.js';
import { NonDeterminismError, RunFailedError, StepFailedError } from './errors.js';
import { StepError } from '../steps/step-error.js';
import { childRunIdOf, childSignalName, parentTag, type ChildOutcome, type ChildStarter } from './children.js';
import type { Workflow } from './define.js';
import { validateRunId } from '../validation.js';
import { decodeEvent, encodeEvent, encodeFailure, eventKey, failureKey, type Event, type FailedAttempt, type History } from './history.js';
import { callOf, retryingCall, type FunctionCall } from './calls.js';
import { checkStepOptions, retryDelay, stepPolicy, type StepOptions } from './step-options.js';
import { decodeSignalValue } from './signal-value.js';
import type { ExecutionTrace } from './execution-trace.js';

/** What a step's function receives. */
export interface StepAttempt {
  /** Aborts when the run is cancelled or the attempt's `timeoutMs` passed. */
  readonly signal: AbortSignal;
  /** 1 for the first attempt. */
  readonly attempt: number;
}

/** How a `waitForSignal` ended: the signal's value, or the timeout. */
export type SignalResult<T> = { readonly timedOut: false; readonly value: T } | { readonly timedOut: true };

export interface WaitForSignalOptions {
  /** How long to wait, in ms. Default: no limit. */
  readonly timeoutMs?: number;
}

export interface InvokeOptions {
  /** The child's run id. Default: `<parent run id>-c<history position>` (hashed when too long). */
  readonly runId?: string;
}

/** The run's logger: messages carry the run id. */
export interface WorkflowLog {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** What a workflow function works with. */
export interface WorkflowContext {
  readonly runId: string;
  /** The version of the definition this run started on (see `defineWorkflow`). */
  readonly version: number;
  /** Aborts when the run is cancelled. */
  readonly signal: AbortSignal;
  readonly log: WorkflowLog;
  /**
   * Runs `fn` until it succeeds once for this run and this call, and returns its value; on every
   * later execution the recorded value is returned without running `fn`. A throw is retried
   * (`options`, else the workflow's step defaults: 2 retries with backoff), except a
   * `StepError.permanent` or an INVALID_ARGUMENT, which end the step at once; out of attempts the
   * step throws `StepFailedError` (STEP_FAILED), which the workflow may catch. The value must be
   * storable by the value codec (JSON-like data, Map, Set, Date, BigInt, typed arrays) and at
   * most 256 KiB encoded, else INVALID_ARGUMENT. Two steps running at once must have different names.
   */
  step<T>(name: string, fn: (attempt: StepAttempt) => T | Promise<T>, options?: StepOptions): Promise<T>;
  /** A durable timer: no process stays busy, and it survives restarts. `until` a Date, or a number of ms. */
  sleep(duration: number | Date): Promise<void>;
  /**
   * Waits durably for the signal `name` of this run (`runtime.signal(runId, name, value)`); a
   * signal sent before the wait is kept for it. One wait at a time per run.
   */
  waitForSignal<T = unknown>(name: string, options?: WaitForSignalOptions): Promise<SignalResult<T>>;
  /**
   * True while the function re-runs code an earlier execution of this run already ran (up to the
   * last operation its history recorded): guard side effects outside steps that should not
   * repeat, such as console output, with it. `log` drops messages while it is true.
   */
  readonly replaying: boolean;
  /**
   * Runs `workflow` (registered on the same runtime) as a child run and waits durably for its
   * value: no process stays busy, and the child's outcome reaches this run when it ends. The
   * child's run id is `<runId>-c<position>` (or `options.runId`). A child that fails or is
   * cancelled throws `RunFailedError` (RUN_FAILED) here, which the workflow may catch. Counts as
   * this run's one wait at a time (with `waitForSignal`). Needs `outcomeRetentionMs` above 0.
   */
  invoke<I, O>(workflow: Workflow<I, O>, input: I, options?: InvokeOptions): Promise<O>;
  /** The time (epoch ms), recorded on first execution and the same on replay. */
  now(): number;
  /** A random number in [0, 1), recorded like `now`. */
  random(): number;
  /** A random UUID (v4), recorded like `now`. */
  uuid(): string;
}

/** Why an execution stopped before its function settled. */
export type Halt =
  | { readonly type: 'suspend'; readonly untilMs: number; readonly wait: { readonly name: string } | undefined }
  /** A history write failed or the lease was lost: the delivery throws and the run replays later. */
  | { readonly type: 'broken'; readonly error: unknown }
  /** The replay diverged from the history (NON_DETERMINISTIC): the run fails. */
  | { readonly type: 'fatal'; readonly error: unknown };

/** What an execution needs from the delivery running it. */
export interface ExecutionInit {
  readonly runId: string;
  readonly version: number;
  readonly queue: Queue;
  readonly clock: Clock;
  readonly log: LogSink;
  readonly prefix: Uint8Array;
  /** What earlier executions recorded; the execution adds the failed attempts it records. */
  readonly history: History;
  /** The underlying step number of this delivery. */
  readonly stepNumber: number;
  /** The signal payload this delivery woke with (null: none, or its wait timed out). */
  readonly wokenWith: Uint8Array | null;
  /**
   * The run's cancellation: its `signal` is created only when read (a step that never looks at it
   * costs none); `cancelRequested`, when given, answers `signal.aborted` without creating it.
   */
  readonly cancel: { readonly signal: AbortSignal; readonly cancelRequested?: boolean };
  readonly stepDefaults: StepOptions;
  /** Fires when the worker running this delivery stops: no new step starts, the run goes back to the queue. */
  readonly stopping?: AbortSignal;
  /** The run's history generation (history.ts), which tags its children. */
  readonly gen: string;
  readonly children: ChildStarter;
  /** Told of each call this execution records, and of a sleep it finds over (a host's live run events). */
  readonly onCall?: CallObserver;
  /** Spans of step attempts and events of replayed calls, when the runtime traces. */
  readonly trace?: ExecutionTrace;
  /**
   * The worker loop's slot of this delivery, given up while the execution only waits for a history
   * write to be durable (no step attempt running) and taken back before its code goes on.
   */
  readonly slot?: HandlerSlot;
}

/** Receives each `ctx` call as an execution records it. */
export type CallObserver = (call: FunctionCall) => void;

const NEVER: Promise<never> = new Promise<never>(() => undefined);

const NO_OPTIONS: StepOptions = Object.freeze({});

/** Longest signal wait when none is given: about 100 years, within the queue's timestamp range. */
const NO_TIMEOUT_MS = 100 * 365 * 24 * 3600_000;

/** Name of the operation at a history position, for determinism errors. */
const describe = (kind: string, name: string): string => (name === '' ? kind : `${kind} ${JSON.stringify(name)}`);

export class Execution implements WorkflowContext {
  readonly runId: string;
  readonly version: number;
  readonly log: WorkflowLog;
  private position = 0;
  /** The last position the history held when this execution began (-1: none). */
  private readonly lastRecorded: number;
  private running = 0;
  /** Step attempts running now: user code the worker slot is held for. */
  private attemptsRunning = 0;
  private readonly inFlight = new Set<string>();
  /** Names of the waits called whose answer is not known yet (at most one). */
  private readonly waiting = new Set<string>();
  private readonly suspensions = new Set<{ untilMs: number; wait?: string }>();
  private readonly pendingWrites = new Set<Promise<void>>();
  private closed = false;
  private checkScheduled = false;
  /** Every history key this execution wrote (or found written at a position it recorded). */
  private readonly written: Uint8Array[] = [];
  private invoked = false;
  private halt!: (h: Halt) => void;
  /** Settles when the function must stop before it settles (suspension, a failed write). */
  readonly halted: Promise<Halt>;

  constructor(private readonly init: ExecutionInit) {
    this.runId = init.runId;
    this.version = init.version;
    let last = -1;
    for (const position of init.history.events.keys()) if (position > last) last = position;
    this.lastRecorded = last;
    // A halted execution starts nothing more (no step attempt, no write): its delivery is over.
    this.halted = new Promise<Halt>((resolve) => {
      this.halt = (h) => {
        this.closed = true;
        resolve(h);
      };
    });
    const fields = (f?: Record<string, unknown>): Record<string, unknown> => ({ runId: init.runId, ...f });
    const unlessReplaying =
      (level: 'debug' | 'info' | 'warn' | 'error') =>
      (m: string, f?: Record<string, unknown>): void => {
        if (!this.replaying) init.log[level](m, fields(f));
      };
    this.log = { debug: unlessReplaying('debug'), info: unlessReplaying('info'), warn: unlessReplaying('warn'), error: unlessReplaying('error') };
  }

  /** Aborts when the run is cancelled (created on first read). */
  get signal(): AbortSignal {
    return this.init.cancel.signal;
  }

  private get cancelled(): boolean {
    const cancel = this.init.cancel;
    return cancel.cancelRequested ?? cancel.signal.aborted;
  }

  /** No operation resolves after this (the function's remaining promises are abandoned). */
  close(): void {
    this.closed = true;
  }

  /** Halts the execution as broken (the lease was lost): the delivery fails and the run replays. */
  abort(error: unknown): void {
    this.halt({ type: 'broken', error });
  }

  /** Waits for the writes of `now`, `random` and `uuid` still in flight. */
  async flush(): Promise<void> {
    while (this.pendingWrites.size > 0) await Promise.all([...this.pendingWrites]);
  }

  async step<T>(name: string, fn: (attempt: StepAttempt) => T | Promise<T>, options: StepOptions = NO_OPTIONS): Promise<T> {
    checkName(name, 'step');
    if (typeof fn !== 'function') throw new InvalidArgumentError(`ctx.step needs a function. step=${JSON.stringify(name)} fn=${show(fn)}`, { reason: 'invalid_step', step: name });
    // Most steps pass no options: skip the check (and its message) for the shared default.
    if (options !== NO_OPTIONS) checkStepOptions(options, `step ${JSON.stringify(name)} options`);
    const position = this.position++;
    const recorded = this.recorded(position, 'step', name);
    if (recorded?.kind === 'step') return 'failed' in recorded ? Promise.reject(new StepFailedError(name, recorded.failed.attempts, recorded.failed.message)) : (decodeValue(recorded.value) as T);
    if (this.closed) return NEVER;
    // A stopping worker hands the run back at this step boundary: the next delivery replays to here.
    if (this.init.stopping?.aborted) return this.suspend({ untilMs: this.init.clock.now() });
    if (this.inFlight.has(name)) {
      this.misuse(new InvalidArgumentError(`two steps named ${JSON.stringify(name)} run at once; steps running in parallel need distinct names`, { reason: 'duplicate_step_name', step: name }));
    }
    this.inFlight.add(name);
    this.running++;
    try {
      return await this.runStep(position, name, fn, options);
    } finally {
      this.inFlight.delete(name);
      this.running--;
      this.schedulePoke();
    }
  }

  private async runStep<T>(position: number, name: string, fn: (attempt: StepAttempt) => T | Promise<T>, options: StepOptions): Promise<T> {
    const policy = stepPolicy(this.init.stepDefaults, options);
    // The values of `now`, `random` and `uuid` the step may use are durable before it runs: a
    // crash must not hand a step's side effect (an idempotency key) a value the run then forgets.
    await this.syncPendingWrites();
    // Attempts an earlier execution recorded as failed count: a crash mid-retries goes on with the next one.
    const failures = this.init.history.failures.get(position) ?? [];
    let lastError = failures.at(-1)?.error ?? '';
    let attempts = failures.length;
    for (let attempt = failures.length + 1; attempt <= policy.attempts; attempt++) {
      const backoffMs = (failures.at(-1)?.retryAtMs ?? 0) - this.init.clock.now();
      if (backoffMs > 0) await this.init.clock.sleep(backoffMs, this.signal);
      if (this.closed) return NEVER;
      if (this.cancelled) this.signal.throwIfAborted();
      attempts = attempt;
      if (this.init.slot?.lent) await takeSlotBack(this.init.slot);
      if (this.closed) return NEVER;
      let value: T;
      this.attemptsRunning++;
      try {
        const run = (): Promise<T> => this.attempt(fn, attempt, policy.timeoutMs);
        value = await (this.init.trace === undefined ? run() : this.init.trace.stepAttempt(position, name, attempt, run));
        this.attemptsRunning--;
      } catch (e) {
        this.attemptsRunning--;
        if (this.cancelled) throw e;
        lastError = errorText(e);
        // A permanent error (`StepError.permanent`, a 401, bad input) would fail every attempt the same way.
        const last = attempt === policy.attempts || isPermanent(e);
        this.log.warn(last ? `step ${JSON.stringify(name)} failed, out of attempts` : `step ${JSON.stringify(name)} failed, retrying`, { attempt, error: lastError });
        if (last) break;
        const atMs = this.init.clock.now();
        await this.recordFailure(position, failures, { name, attempt, error: lastError, atMs, retryAtMs: atMs + retryDelay(policy, attempt + 1) });
        continue;
      }
      const stored = await this.record(position, { kind: 'step', name, value: encodeStepValue(name, value) });
      if (stored.kind === 'step' && 'failed' in stored) throw new StepFailedError(name, stored.failed.attempts, stored.failed.message);
      return decodeValue((stored as { value: Uint8Array }).value) as T;
    }
    const stored = await this.record(position, { kind: 'step', name, failed: { message: lastError, attempts } });
    if (stored.kind === 'step' && !('failed' in stored)) return decodeValue(stored.value) as T;
    throw new StepFailedError(name, attempts, lastError);
  }

  /** Records a failed attempt of the step at `position` (adding it to `failures`, the step's earlier ones) before its retry waits. */
  private async recordFailure(position: number, failures: FailedAttempt[], failure: FailedAttempt): Promise<void> {
    if (this.closed) return NEVER;
    // A plain put: two executions failing the same attempt record the same fact.
    const key = failureKey(this.init.prefix, position, failure.attempt);
    await this.guarded(() => this.init.queue.kvPut(key, encodeFailure(failure)));
    this.written.push(key);
    failures.push(failure);
    this.init.history.failures.set(position, failures);
    this.report(() => retryingCall(position, failures));
  }

  /** One attempt, aborted by the run's cancellation or the attempt's timeout. */
  private async attempt<T>(fn: (attempt: StepAttempt) => T | Promise<T>, attempt: number, timeoutMs: number | undefined): Promise<T> {
    if (timeoutMs === undefined) return await fn(new LazyAttempt(this, attempt));
    const timer = new AbortController();
    const signal = AbortSignal.any([this.signal, timer.signal]);
    const timedOut = this.init.clock.sleep(timeoutMs, timer.signal).then(
      () => {
        const error = new TaqubaError('TIMEOUT', `step attempt timed out after ${timeoutMs} ms`, { details: { timeoutMs } });
        timer.abort(error);
        throw error;
      },
      () => NEVER,
    );
    try {
      return await Promise.race([Promise.resolve(fn({ signal, attempt })), timedOut]);
    } finally {
      timer.abort();
    }
  }

  async sleep(duration: number | Date): Promise<void> {
    const now = this.init.clock.now();
    const ms = duration instanceof Date ? duration.getTime() - now : duration;
    // Finite: an endless sleep would only fail later, outside the function (the next step's delay must be finite).
    if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new InvalidArgumentError(`ctx.sleep needs a finite number of ms or a valid Date. duration=${show(duration)}`, { reason: 'invalid_sleep' });
    const position = this.position++;
    const replayed = this.recorded(position, 'sleep', '');
    if (this.closed && replayed === undefined) return NEVER;
    const sleep = (replayed ?? (await this.record(position, { kind: 'sleep', name: '', untilMs: now + Math.max(0, ms), atStep: this.init.stepNumber }))) as Extract<Event, { kind: 'sleep' }>;
    if (this.init.clock.now() < sleep.untilMs) return this.suspend({ untilMs: sleep.untilMs });
    // Over: the execution after the one that began it is the one it woke (a fresh sleep already due reported itself).
    if (replayed !== undefined && sleep.atStep === this.init.stepNumber - 1) this.report(() => callOf(position, sleep, false, []));
  }

  async waitForSignal<T = unknown>(name: string, options: WaitForSignalOptions = {}): Promise<SignalResult<T>> {
    checkName(name, 'signal');
    const timeoutMs = options.timeoutMs ?? NO_TIMEOUT_MS;
    if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs < 0) {
      throw new InvalidArgumentError(`waitForSignal timeoutMs must be a finite number of ms, at least 0. timeoutMs=${show(timeoutMs)}`, { reason: 'invalid_wait', signal: name });
    }
    // A wait is pending from its call until its answer is known (not only once it suspended: two
    // waits begun in one tick would both take the next delivery's signal).
    for (const pending of this.waiting) {
      this.misuse(new InvalidArgumentError(`a run waits for one signal at a time: ${JSON.stringify(pending)} is still awaited when ${JSON.stringify(name)} is`, { reason: 'concurrent_wait', signal: name }));
    }
    const position = this.position++;
    let recorded = this.recorded(position, 'wait', name);
    this.waiting.add(name);
    if (recorded === undefined) {
      if (this.closed) return NEVER;
      recorded = await this.record(position, { kind: 'wait', name, untilMs: this.init.clock.now() + timeoutMs, atStep: this.init.stepNumber });
    }
    const wait = recorded as Extract<Event, { kind: 'wait' }>;
    if (wait.value !== undefined) {
      this.waiting.delete(name);
      return resultOf<T>(wait.value);
    }
    // Woken by this wait (the delivery that follows the one that began it): the delivery's payload
    // is its signal; without one, the wait timed out unless it was woken early by a sleep.
    if (this.init.stepNumber > wait.atStep) {
      const value = this.init.wokenWith ?? (this.init.clock.now() >= wait.untilMs ? null : undefined);
      if (value !== undefined) {
        this.waiting.delete(name);
        if (this.closed) return NEVER;
        await this.write(position, { ...wait, value }, false);
        return resultOf<T>(value);
      }
    }
    return this.suspend({ untilMs: wait.untilMs, wait: name });
  }

  async invoke<I, O>(workflow: Workflow<I, O>, input: I, options: InvokeOptions = {}): Promise<O> {
    this.invoked = true;
    this.init.children.check(workflow);
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`invoke options must be an object. options=${show(options)}`, { reason: 'invalid_invoke' });
    if (options.runId !== undefined) validateRunId(options.runId);
    for (const pending of this.waiting) {
      this.misuse(new InvalidArgumentError(`a run waits for one signal or child at a time: ${JSON.stringify(pending)} is still awaited when child ${workflow.name} is invoked`, { reason: 'concurrent_wait', workflow: workflow.name }));
    }
    const position = this.position++;
    let recorded = this.recorded(position, 'invoke', workflow.name);
    const waitName = `child ${workflow.name}`;
    this.waiting.add(waitName);
    if (recorded === undefined) {
      const childRunId = options.runId ?? (await childRunIdOf(this.runId, position));
      if (this.closed) return NEVER;
      recorded = await this.record(position, { kind: 'invoke', name: workflow.name, childRunId, atStep: this.init.stepNumber });
    }
    const child = recorded as Extract<Event, { kind: 'invoke' }>;
    if (child.value !== undefined) {
      this.waiting.delete(waitName);
      return childValue<O>(child.childRunId, child.value);
    }
    // Woken by the child's outcome (the one wait of the run is this one).
    if (this.init.stepNumber > child.atStep && this.init.wokenWith !== null) {
      this.waiting.delete(waitName);
      if (this.closed) return NEVER;
      await this.write(position, { ...child, value: this.init.wokenWith }, false);
      return childValue<O>(child.childRunId, this.init.wokenWith);
    }
    if (this.closed) return NEVER;
    await this.init.children.ensureStarted(workflow, input, child.childRunId, parentTag(this.runId, this.init.gen), this.init.trace?.traceparent);
    return this.suspend({ untilMs: this.init.clock.now() + NO_TIMEOUT_MS, wait: childSignalName(child.childRunId) });
  }

  get replaying(): boolean {
    return this.position <= this.lastRecorded;
  }

  now(): number {
    return this.recordedValue('now', () => this.init.clock.now()) as number;
  }

  random(): number {
    return this.recordedValue('random', () => Math.random()) as number;
  }

  uuid(): string {
    return this.recordedValue('uuid', randomUuid) as string;
  }

  /** The event recorded at `position`, checked against the call made there; undefined if none. */
  private recorded(position: number, kind: Event['kind'], name: string): Event | undefined {
    const event = this.init.history.events.get(position);
    if (event === undefined) {
      // A step whose attempts failed so far: the call there must be that step.
      const failed = this.init.history.failures.get(position)?.[0];
      if (failed !== undefined && (kind !== 'step' || failed.name !== name)) this.diverged(position, { kind: 'step', name: failed.name }, kind, name);
      return undefined;
    }
    if (event.kind !== kind || event.name !== name) this.diverged(position, event, kind, name);
    this.init.trace?.replayed(position, kind, name);
    return event;
  }

  private recordedValue(kind: 'now' | 'random' | 'uuid', make: () => number | string): number | string {
    const position = this.position++;
    const recorded = this.recorded(position, kind, '');
    if (recorded !== undefined) return (recorded as { value: number | string }).value;
    const value = make();
    if (!this.closed) {
      const write = this.write(position, { kind, name: '', value }, true).then(
        () => undefined,
        (error: unknown) => this.halt({ type: 'broken', error }),
      );
      this.pendingWrites.add(write);
      void write.finally(() => this.pendingWrites.delete(write));
    }
    return value;
  }

  /** Records `event` at `position` unless another execution did first; returns what the history holds. */
  private async record(position: number, event: Event): Promise<Event> {
    await this.syncPendingWrites();
    // Closed: the delivery ended (the function returned with this operation still running, or
    // halted); a write now would outlive the history's deletion.
    if (this.closed) return NEVER;
    return this.whileSyncing(() => this.write(position, event, true));
  }

  /** Waits for the writes of `now`, `random` and `uuid` still in flight, lending the slot meanwhile. */
  private async syncPendingWrites(): Promise<void> {
    if (this.pendingWrites.size > 0) await this.whileSyncing(() => this.flush());
  }

  /**
   * Waits for history writes to be durable. With no step attempt of this execution running, the
   * worker slot goes to another delivery meanwhile (on the filesystem a write's sync is most of a
   * step's time) and is taken back, ahead of new claims, before the function goes on.
   */
  private whileSyncing<T>(wait: () => Promise<T>): Promise<T> {
    return this.attemptsRunning > 0 ? wait() : withSlotLent(this.init.slot, wait);
  }

  /**
   * Fails the run and throws `error` into the function: a misuse (two waits at once, two steps of
   * one name at once) is seen only on the execution where the calls overlap, so a function that
   * caught it would take another path on replay.
   */
  private misuse(error: Error): never {
    this.halt({ type: 'fatal', error });
    throw error;
  }

  /** Fails the run (the function cannot catch its way past a divergence) and throws into the function. */
  private diverged(position: number, recorded: Pick<Event, 'kind' | 'name'>, kind: Event['kind'], name: string): never {
    const error = new NonDeterminismError(this.runId, position, describe(recorded.kind, recorded.name), describe(kind, name));
    this.halt({ type: 'fatal', error });
    throw error;
  }

  /**
   * The history keys this execution wrote: for a run it started fresh, the whole history of its
   * generation. Undefined once it invoked a child (an ending must then look for children still
   * awaited, which takes the full sweep).
   */
  writtenKeys(): readonly Uint8Array[] | undefined {
    return this.invoked ? undefined : this.written;
  }

  /** Writes `event` at `position`; returns what the history holds there (another execution's event when it recorded first). */
  private async write(position: number, event: Event, createOnly: boolean): Promise<Event> {
    const stored = await this.guarded(() => this.writeOnce(position, event, createOnly));
    if (stored === event) this.report(() => callOf(position, event, event.kind === 'sleep' && this.init.clock.now() < event.untilMs, this.init.history.failures.get(position) ?? []));
    return stored;
  }

  /** Runs a history write; one that fails halts the execution as broken (the delivery fails and the run replays). */
  private async guarded<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof NonDeterminismError)) this.halt({ type: 'broken', error });
      throw error;
    }
  }

  /** Tells the observer of a call, if any; its failure is not the run's. */
  private report(call: () => FunctionCall): void {
    if (this.init.onCall === undefined) return;
    try {
      this.init.onCall(call());
    } catch {
      // An observer's failure is not the run's.
    }
  }

  private async writeOnce(position: number, event: Event, createOnly: boolean): Promise<Event> {
    const key = eventKey(this.init.prefix, position);
    const bytes = encodeEvent(event);
    const wrote = createOnly ? await this.init.queue.kvComparePut(key, null, bytes) : await this.init.queue.kvPut(key, bytes).then(() => true);
    const existing = wrote ? undefined : await this.init.queue.kvGet(key);
    // Ours, or a concurrent execution's: the key is in the run's history either way.
    this.written.push(key);
    if (wrote) return event;
    // A concurrent execution of this run recorded the position first: its answer stands.
    if (existing === undefined) throw new TaqubaError('CONFLICT', `workflow history entry vanished while recorded. runId=${this.runId} position=${position}`, { details: { runId: this.runId, position } });
    const theirs = decodeEvent(existing, `position ${position}`);
    if (theirs.kind !== event.kind || theirs.name !== event.name) this.diverged(position, theirs, event.kind, event.name);
    return theirs;
  }

  /** Parks the caller for good and halts the execution once nothing else can make progress. */
  private suspend(s: { untilMs: number; wait?: string }): Promise<never> {
    if (!this.closed) {
      this.suspensions.add(s);
      this.schedulePoke();
    }
    return NEVER;
  }

  /**
   * Checks after the current turn (so calls made in the same tick, like the other members of a
   * `Promise.all`, have started) whether the function can only wait: then it halts.
   */
  private schedulePoke(): void {
    if (this.checkScheduled || this.suspensions.size === 0) return;
    this.checkScheduled = true;
    setTimeout(() => {
      this.checkScheduled = false;
      if (this.closed || this.running > 0 || this.suspensions.size === 0) return;
      const untilMs = Math.min(...[...this.suspensions].map((s) => s.untilMs));
      const wait = [...this.suspensions].find((s) => s.wait !== undefined)?.wait;
      this.halt({ type: 'suspend', untilMs, wait: wait === undefined ? undefined : { name: wait } });
    }, 0);
  }
}

/** A step attempt whose `signal` (the run's) is created only if the step reads it. */
class LazyAttempt implements StepAttempt {
  readonly #execution: Execution;

  constructor(
    execution: Execution,
    readonly attempt: number,
  ) {
    this.#execution = execution;
  }

  get signal(): AbortSignal {
    return this.#execution.signal;
  }
}

function checkName(name: unknown, what: string): asserts name is string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200) {
    throw new InvalidArgumentError(`a ${what} name must be a string of 1..200 characters. name=${show(name)}`, { reason: `invalid_${what}_name` });
  }
}

/** Whether a step's error says retrying cannot help: a permanent `StepError`, or the library's own refusals of bad input. */
function isPermanent(e: unknown): boolean {
  return (e instanceof StepError && e.kind === 'permanent') || isTaqubaError(e, 'INVALID_ARGUMENT');
}

function encodeStepValue(name: string, value: unknown): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = encodeValue(value);
  } catch (e) {
    throw new InvalidArgumentError(`step ${JSON.stringify(name)} returned a value that cannot be stored: ${e instanceof Error ? e.message : String(e)}`, { reason: 'unstorable_step_value', step: name });
  }
  // Room for the event's own fields under the caller-KV value cap.
  if (bytes.length > MAX_KV_VALUE_SIZE - 1024) {
    throw new InvalidArgumentError(`step ${JSON.stringify(name)} returned ${bytes.length} bytes encoded; a step value holds at most ${MAX_KV_VALUE_SIZE - 1024} (store large data elsewhere and return its key)`, {
      reason: 'step_value_too_large',
      step: name,
      bytes: bytes.length,
    });
  }
  return bytes;
}

/** A child's value from its outcome signal, or its failure as RUN_FAILED. */
function childValue<O>(childRunId: string, payload: Uint8Array): O {
  const outcome = decodeSignalValue(payload) as ChildOutcome;
  if (outcome.status !== 'succeeded') throw new RunFailedError(childRunId, outcome.status, outcome.error);
  return decodeValue(outcome.result!) as O;
}

function resultOf<T>(value: Uint8Array | null): SignalResult<T> {
  return value === null ? { timedOut: true } : { timedOut: false, value: decodeSignalValue(value) as T };
}

/** "Error: message" for errors, the value shown otherwise; a library error keeps its code. */
export function errorText(e: unknown): string {
  if (isTaqubaError(e)) return `${e.code}: ${e.message}`;
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return show(e);
}

function randomUuid(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
