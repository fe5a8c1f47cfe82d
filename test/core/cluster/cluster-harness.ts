/**
 * In-process cluster members over one memory store and one MockClock: open members, drive the
 * clock until a condition holds, and a runner/hook pair that records what ran.
 */
import { onTestFinished } from 'vitest';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { MockClock } from '../../../src/core/clock.js';
import { openCluster, type Cluster, type ClusterOptions } from '../../../src/core/cluster/index.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import { StepOutcome, type RunOutcome, type Step, type TerminalEffects, type TerminalHook } from '../../../src/core/workflow/index.js';

export const LEASE_MS = 3000;
export const SKEW_MS = 500;
export const SHARDS = 16;
export const quiet = { warn: () => undefined, error: () => undefined };

/** Terminal outcomes seen, and one committed KV effect per hook call (`term/<run>/<n>`). */
export class RecordingHook implements TerminalHook {
  readonly outcomes: RunOutcome[] = [];
  private calls = 0;
  async onTermination(outcome: RunOutcome, effects: TerminalEffects): Promise<void> {
    this.outcomes.push(outcome);
    effects.put(`term/${outcome.runId}/${this.calls++}`, utf8(outcome.status));
  }
}

/** Two steps: step 0 continues with its input, step 1 succeeds with it. Waits on `<run>#go` when the input says `wait`. */
export async function twoSteps(step: Step): Promise<StepOutcome> {
  const text = fromUtf8(step.payload);
  if (step.stepNumber === 0) {
    return text === 'wait' ? StepOutcome.continueOnSignal(step.payload, `${step.runId}#go`, 3_600_000) : StepOutcome.continueNow(step.payload);
  }
  return StepOutcome.succeed(step.signalPayload ?? step.payload);
}

export interface ClusterWorld {
  readonly store: ObjectStore;
  readonly clock: MockClock;
  readonly hook: RecordingHook;
  open(memberId: string, extra?: Partial<ClusterOptions>): Promise<Cluster>;
  /**
   * Advances the clock in steps of `stepMs` (default 50; real yields between) until `cond` holds;
   * throws after `maxMs` of mock time. Longer steps for long idle waits: every poll of every
   * shard wakes per step.
   */
  until(what: string, cond: () => boolean | Promise<boolean>, maxMs?: number, stepMs?: number): Promise<void>;
  /** Advances the mock clock while `promise` is pending (inbox polls need it), and returns its value. */
  drive<T>(promise: Promise<T>, maxMs?: number): Promise<T>;
}

export interface ClusterWorldOptions {
  /** Wraps the world's store (e.g. `slowStore`), given the world's clock. */
  readonly wrap?: (inner: ObjectStore, clock: MockClock) => ObjectStore;
  /**
   * Registers the world's cleanup (its members halted and left) to run when the test ends.
   * Concurrent tests pass their context's `onTestFinished`: vitest's global one does not know
   * which of them is running. Default: the global `onTestFinished`.
   */
  readonly onFinished?: (fn: () => Promise<void>) => void;
}

export function clusterWorld(inner: ObjectStore = new MemoryObjectStore(), options: ClusterWorldOptions = {}): ClusterWorld {
  const clock = new MockClock();
  const store = options.wrap ? options.wrap(inner, clock) : inner;
  const hook = new RecordingHook();
  const members: Cluster[] = [];
  (options.onFinished ?? onTestFinished)(async () => {
    for (const m of members) m.halt();
    await Promise.all(members.map((m) => drivePromise(clock, m.leave(), 60_000).catch(() => undefined)));
  });
  return {
    store,
    clock,
    hook,
    async open(memberId, extra = {}) {
      const m = await drivePromise(
        clock,
        openCluster(store, { name: 'c', shards: SHARDS, runner: twoSteps, hook, memberId, leaseMs: LEASE_MS, maxClockSkewMs: SKEW_MS, inboxPollMs: 20, clock, logger: quiet, ...extra }),
        10_000,
      );
      members.push(m);
      return m;
    },
    async until(what, cond, maxMs = 60_000, stepMs = 50) {
      const start = clock.now();
      while (!(await cond())) {
        if (clock.now() - start > maxMs) throw new Error(`not reached within ${maxMs} ms of mock time: ${what}`);
        await clock.advance(stepMs);
        // One timer turn, not a wait for time: work the advance woke (store I/O, yields) settles first.
        await new Promise((r) => setTimeout(r, 1));
      }
    },
    drive: (promise, maxMs = 60_000) => drivePromise(clock, promise, maxMs),
  };
}

async function drivePromise<T>(clock: MockClock, promise: Promise<T>, maxMs: number): Promise<T> {
  let settled = false;
  const watched = promise.finally(() => (settled = true));
  watched.catch(() => undefined);
  const start = clock.now();
  while (!settled && clock.now() - start <= maxMs) {
    await clock.advance(20);
    // One timer turn, not a wait for time: work the advance woke (store I/O, yields) settles first.
    await new Promise((r) => setTimeout(r, 1));
  }
  return watched;
}

/** Ownership across members: every shard's owners. */
export function owners(members: readonly Cluster[]): string[][] {
  const table: string[][] = Array.from({ length: SHARDS }, () => []);
  for (const m of members) for (const s of m.ownedShards()) table[s]!.push(m.memberId);
  return table;
}

/** Every shard owned by exactly one member. */
export function converged(members: readonly Cluster[]): boolean {
  return owners(members).every((o) => o.length === 1);
}

/** Fair: every member owns floor or ceil of shards/members. */
export function fair(members: readonly Cluster[]): boolean {
  const lo = Math.floor(SHARDS / members.length);
  return converged(members) && members.every((m) => m.ownedShards().length === lo || m.ownedShards().length === lo + 1);
}

/** A store whose every call first waits `latency()` ms of `clock`: a slow or loaded store. */
export function slowStore(inner: ObjectStore, clock: MockClock, latency: () => number): ObjectStore {
  const wait = () => clock.sleep(latency());
  return {
    get: async (key, o) => (await wait(), inner.get(key, o)),
    put: async (key, data, o) => (await wait(), inner.put(key, data, o)),
    delete: async (key) => (await wait(), inner.delete(key)),
    list: (prefix, o) => ({
      async *[Symbol.asyncIterator]() {
        await wait();
        yield* inner.list(prefix, o);
      },
    }),
  };
}

/** The log lines of the members given `events.logger(id)`, to count takes and drops. */
export class EventLog {
  readonly lines: string[] = [];
  constructor(private readonly clock: MockClock) {}
  logger(memberId: string): { info(m: string, f?: unknown): void; warn(m: string, f?: unknown): void; error(m: string, f?: unknown): void } {
    const add = (level: string) => (m: string, f?: unknown) => this.lines.push(`${this.clock.now()} ${memberId} ${level} ${m} ${JSON.stringify(f ?? {})}`);
    return { info: add('info'), warn: add('warn'), error: add('error') };
  }
  count(pattern: RegExp, since = -Infinity): number {
    return this.lines.filter((l) => pattern.test(l) && Number(l.slice(0, l.indexOf(' '))) >= since).length;
  }
}
