/**
 * Shared pieces of the workflow suites: a store factory, a mock-clocked queue whose scheduler
 * ticks when the clock moves, runtimes that are shut down after each test, a recording terminal
 * hook, and `eventually` for waiting on background work in real time.
 */
import { onTestFinished } from 'vitest';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { MockClock } from '../../../src/core/clock.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import { Queue, type QueueOptions } from '../../../src/core/queue/index.js';
import {
  WorkflowRuntime,
  type RunOutcome,
  type RunnerHandle,
  type Step,
  type StepOutcome,
  type StepRunner,
  type TerminalEffects,
  type TerminalHook,
  type WorkflowRuntimeOptions,
} from '../../../src/core/workflow/index.js';
import { GatedStore } from '../../support/gated-store.js';

export type StoreFactory = () => ObjectStore | Promise<ObjectStore>;

export const silentLogger = { warn: () => undefined };
export const b = utf8;
export const s = fromUtf8;
export const QUEUE = 'workflow-steps';

let counter = 0;

export interface WorkflowHarness {
  readonly store: ObjectStore;
  readonly clock: MockClock;
  /** The current queue handle (replaced by `restart`). */
  queue: Queue;
  /** Builds a runtime on the current queue (not started). */
  runtime(runner: StepRunner, hook: TerminalHook, options?: WorkflowRuntimeOptions): WorkflowRuntime;
  /** Builds and starts a runtime; it is shut down when the test ends. */
  start(runner: StepRunner, hook: TerminalHook, options?: WorkflowRuntimeOptions): { runtime: WorkflowRuntime; handle: RunnerHandle };
  /** Stops every started runtime, closes the queue and opens a new handle on the same store (a restart). */
  restart(options?: QueueOptions): Promise<Queue>;
  /**
   * A crash: started runtimes are told to stop but not awaited (their in-flight steps never
   * settle on the new handle), the queue is closed with its claims unsettled, and a new handle is
   * opened (which requeues those claims).
   */
  crashRestart(options?: QueueOptions): Promise<Queue>;
  /**
   * Shuts down every started runtime, waiting for its in-flight steps, hooks and settlements.
   * The barrier before asserting that nothing more happened: after it, nothing can.
   */
  stopRuntimes(): Promise<void>;
  /** Moves the mock clock and lets the scheduler promote what became due. */
  advance(ms: number): Promise<void>;
  /** Holds every object-store put until the returned function is called (commits stay in flight). */
  holdWrites(): () => void;
}

/** A queue for runtime tests: the mock clock, no background reaper or scheduler (tests run them), no retry backoff, silent. */
export function openTestQueue(store: ObjectStore, path: string, clock: MockClock, queueOptions: QueueOptions = {}): Promise<Queue> {
  return Queue.open(store, path, {
    clock,
    reaperIntervalMs: 1e12,
    schedulerIntervalMs: 1e12,
    logger: silentLogger,
    defaultQueueConfig: { retryBackoffBaseMs: 0 },
    ...queueOptions,
  });
}

export async function makeHarness(factory: StoreFactory, queueOptions: QueueOptions = {}): Promise<WorkflowHarness> {
  const gated = new GatedStore(await factory());
  const store: ObjectStore = gated;
  const clock = new MockClock(1_700_000_000_000);
  const path = `workflow-test-${++counter}`;
  const open = (extra: QueueOptions = {}): Promise<Queue> => openTestQueue(store, path, clock, { ...queueOptions, ...extra });
  const handles: { handle: RunnerHandle; stop: AbortController }[] = [];
  const stopAll = async (): Promise<void> => {
    for (const h of handles.splice(0)) await h.handle.shutdown().catch(() => undefined);
  };
  const h: WorkflowHarness = {
    store,
    clock,
    queue: await open(),
    runtime: (runner, hook, options = {}) => new WorkflowRuntime(h.queue, store, runner, hook, { logger: silentLogger, ...options }),
    start: (runner, hook, options) => {
      const runtime = h.runtime(runner, hook, options);
      const stop = new AbortController();
      const handle = runtime.spawn(stop.signal);
      handles.push({ handle, stop });
      return { runtime, handle };
    },
    stopRuntimes: stopAll,
    restart: async (options) => {
      await stopAll();
      await h.queue.close();
      h.queue = await open(options);
      return h.queue;
    },
    crashRestart: async (options) => {
      for (const h of handles.splice(0)) h.stop.abort();
      await h.queue.close();
      h.queue = await open(options);
      return h.queue;
    },
    holdWrites: () => {
      const held = gated.hold();
      return () => held.release();
    },
    advance: async (ms) => {
      await clock.advance(ms);
      await h.queue.promoteScheduledNow();
    },
  };
  onTestFinished(async () => {
    await stopAll();
    await h.queue.close().catch(() => undefined);
  });
  return h;
}

/**
 * Polls `check` (real time) until it returns a truthy value or stops throwing; fails after
 * `timeoutMs` (15 s by default: a deadline, not a wait, so a loaded machine or a browser worker
 * on OPFS only makes it wait longer, never fail).
 */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
      last = new Error(`${what} not met`);
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw last instanceof Error ? last : new Error(String(last));
    await sleep(3);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A terminal hook that records what it receives. `behaviour` runs first and may throw or stage effects. */
export class RecordingHook implements TerminalHook {
  readonly outcomes: RunOutcome[] = [];
  calls = 0;

  constructor(private readonly behaviour?: (outcome: RunOutcome, effects: TerminalEffects, call: number) => Promise<void> | void) {}

  async onTermination(outcome: RunOutcome, effects: TerminalEffects): Promise<void> {
    this.calls++;
    if (this.behaviour) await this.behaviour(outcome, effects, this.calls);
    this.outcomes.push(outcome);
  }

  /** Waits until `n` outcomes were recorded and returns them. */
  async waitFor(n = 1, timeoutMs = 15_000): Promise<RunOutcome[]> {
    await eventually(() => this.outcomes.length >= n, timeoutMs, `${n} terminal outcome(s)`);
    return this.outcomes;
  }

  async first(): Promise<RunOutcome> {
    return (await this.waitFor(1))[0];
  }
}

/** A promise with its resolve function exposed. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Every caller-KV key under `prefix` (as text). */
export async function kvKeys(queue: Queue, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let cursor: Uint8Array | undefined;
  for (;;) {
    const page = await queue.kvScan(utf8(prefix), { cursor, limit: 100 });
    for (const [k] of page.entries) out.push(fromUtf8(k));
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
  }
}
