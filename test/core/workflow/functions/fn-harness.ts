/**
 * Shared pieces of the workflow-function suites: a "world" per test (a store, a MockClock, a
 * queue whose scheduler and reaper only run when told to), runtimes built with `{ workflows }`
 * whose workers are stopped when the test ends, a crash-restart (the workers are abandoned with
 * their deliveries in flight, the queue is closed with its claims unsettled and opened again: what
 * a new process sees), gates that hold a workflow at a chosen point, and waits on run states.
 */
import { onTestFinished } from 'vitest';
import { fromUtf8, utf8 } from '../../../../src/core/bytes.js';
import { MockClock } from '../../../../src/core/clock.js';
import type { ObjectStore } from '../../../../src/core/objects/object-store.js';
import { Queue, type QueueOptions } from '../../../../src/core/queue/index.js';
import { WorkflowRuntime, type RunDetails, type RunnerHandle, type WorkflowRuntimeOptions } from '../../../../src/core/workflow/index.js';
import type { AnyWorkflow } from '../../../../src/core/workflow/functions/define.js';
import { GatedStore, type HeldPuts } from '../../../support/gated-store.js';
import { eventually, openTestQueue, silentLogger, type StoreFactory } from '../harness.js';

export { eventually, silentLogger, type StoreFactory };

export const START_MS = 1_700_000_000_000;
const HISTORY = 'workflow/fn/';
let counter = 0;

export type { HeldPuts };

export interface FnWorld {
  readonly store: ObjectStore;
  /** Holds every object-store put from now on. */
  holdPuts(): HeldPuts;
  readonly clock: MockClock;
  /** The current queue handle (replaced by `restart`). */
  queue: Queue;
  /** A runtime on the current queue with its worker running (abandoned or stopped by `restart`, stopped at the end). */
  start(workflows: readonly AnyWorkflow[], options?: WorkflowRuntimeOptions): WorkflowRuntime;
  /** A runtime on the current queue without a worker. */
  runtime(workflows: readonly AnyWorkflow[], options?: WorkflowRuntimeOptions): WorkflowRuntime;
  /**
   * A new process: every worker is told to stop but not awaited (a delivery held inside the
   * function stays held, and never settles on the new handle), the queue is closed with its
   * claims unsettled, and a new handle is opened on the same store (which requeues them).
   */
  restart(): Promise<void>;
  /** Stops every worker, waiting for its deliveries: nothing more happens after it. */
  stop(): Promise<void>;
  /** Moves the mock clock and promotes what became due. */
  advance(ms: number): Promise<void>;
  /** Every key of the workflow-function histories (all runs), as text. */
  historyKeys(): Promise<string[]>;
}

export async function fnWorld(factory: StoreFactory, queueOptions: QueueOptions = {}): Promise<FnWorld> {
  const holdable = new GatedStore(await factory());
  const store: ObjectStore = holdable;
  const clock = new MockClock(START_MS);
  const path = `fn-${++counter}`;
  const open = (): Promise<Queue> => openTestQueue(store, path, clock, queueOptions);
  const workers: { handle: RunnerHandle; stop: AbortController }[] = [];
  const stopAll = async (): Promise<void> => {
    for (const w of workers.splice(0)) await w.handle.shutdown().catch(() => undefined);
  };
  const w: FnWorld = {
    store,
    clock,
    holdPuts: () => holdable.hold(),
    queue: await open(),
    // Workers wake on the queue's notifications; a poll interval on the mock clock would make every
    // `advance` run one claim poll and one reconciliation pass per 250 ms it skips.
    runtime: (workflows, options = {}) => new WorkflowRuntime(w.queue, store, { workflows }, undefined, { logger: silentLogger, pollIntervalMs: 3_600_000, commandPollMs: null, ...options }),
    start(workflows, options) {
      const runtime = w.runtime(workflows, options);
      const stop = new AbortController();
      workers.push({ handle: runtime.spawn(stop.signal), stop });
      return runtime;
    },
    async restart() {
      for (const x of workers.splice(0)) x.stop.abort();
      await w.queue.close();
      w.queue = await open();
    },
    stop: stopAll,
    async advance(ms) {
      await clock.advance(ms);
      await w.queue.promoteScheduledNow();
    },
    async historyKeys() {
      const out: string[] = [];
      let cursor: Uint8Array | undefined;
      do {
        const page = await w.queue.kvScan(utf8(HISTORY), { cursor, limit: 1000 });
        for (const [k] of page.entries) out.push(fromUtf8(k));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return out;
    },
  };
  onTestFinished(async () => {
    // Workers abandoned by a restart hold deliveries that never settle: only the live ones are awaited.
    await stopAll();
    await w.queue.close().catch(() => undefined);
  });
  return w;
}

/** A promise with its resolve and reject exposed. */
export interface Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Named holding points for workflow code: `hold(point)` waits while `point` is armed, once (a
 * replay passes through); `reached(point)` resolves when the code got there.
 */
export class Gates {
  private readonly armed = new Map<string, { reached: Deferred; release: Deferred; passed: boolean }>();

  arm(point: string): void {
    this.armed.set(point, { reached: deferred(), release: deferred(), passed: false });
  }

  /** Called by the workflow code. */
  async hold(point: string): Promise<void> {
    const gate = this.armed.get(point);
    if (gate === undefined || gate.passed) return;
    gate.passed = true;
    gate.reached.resolve();
    await gate.release.promise;
  }

  /** Resolves once the code reached `point` (armed before). */
  reached(point: string): Promise<void> {
    return within(this.gate(point).reached.promise, 10_000, `the workflow to reach ${point}`);
  }

  /** Lets the code held at `point` go on. */
  release(point: string): void {
    this.gate(point).release.resolve();
  }

  private gate(point: string): { reached: Deferred; release: Deferred } {
    const gate = this.armed.get(point);
    if (gate === undefined) throw new Error(`gate ${point} is not armed`);
    return gate;
  }
}

/** Fails with `what` when `promise` has not settled after `ms` of real time (a guard, not a wait). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

/** The run's active details once `check` holds (polls the store). */
export function runState(runtime: WorkflowRuntime, runId: string, check: (d: RunDetails) => boolean, what: string): Promise<RunDetails> {
  return eventually(
    async () => {
      const d = await runtime.getRun(runId);
      return d !== null && check(d) ? d : undefined;
    },
    10_000,
    what,
  ) as Promise<RunDetails>;
}

/** Waits until the run sleeps (its next underlying step scheduled on a timer) and returns its details. */
export const sleeping = (runtime: WorkflowRuntime, runId: string): Promise<RunDetails> =>
  runState(runtime, runId, (d) => d.state === 'scheduled' && d.waitingFor?.type === 'timer' && d.waitingFor.reason === 'delay', `run ${runId} to sleep`);

/** Waits until the run waits for a signal and returns its details. */
export const waitingForSignal = (runtime: WorkflowRuntime, runId: string): Promise<RunDetails> =>
  runState(runtime, runId, (d) => d.state === 'waiting-for-signal', `run ${runId} to wait for a signal`);

/** The rejection of `promise` (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Record<string, unknown> & Error> {
  try {
    const value = await promise;
    throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
  } catch (e) {
    return e as Record<string, unknown> & Error;
  }
}

/** The error `fn` throws synchronously (fails when it does not). */
export function thrown(fn: () => unknown): Record<string, unknown> & Error {
  try {
    fn();
  } catch (e) {
    return e as Record<string, unknown> & Error;
  }
  throw new Error('expected a throw');
}

/** The `reason` detail of a library error. */
export const reasonOf = (e: unknown): unknown => (e as { details?: Record<string, unknown> }).details?.reason;

/** Counts calls by key. */
export class Counter {
  private readonly counts = new Map<string, number>();
  hit(key: string): number {
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    return n;
  }
  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }
  all(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort(([a], [b]) => a.localeCompare(b)));
  }
}

/** The result of a run, with a real-time guard. */
export const resultOf = <O>(run: { result(): Promise<O> }, what = 'the run result'): Promise<O> => within(run.result(), 10_000, what);
