/**
 * The workflow.chain workload, shared by workflow.chain (memory, fs), s3.chain and browser.chain
 * (inside a worker, so this module imports only platform-neutral core code). RUNS runs of STEPS
 * steps; every step returns its 100-byte payload as the next step's input (the last succeeds with
 * it); the runtime works CONCURRENCY steps at a time; no terminal hook (no notification jobs).
 */
import type { ObjectStore } from '../src/core/objects/object-store.js';
import type { Claim, Queue } from '../src/core/queue/index.js';
import { HEADER_RUN_ID, NoopTerminalHook, StepOutcome, WorkflowRuntime, defineWorkflow, type Step } from '../src/core/workflow/index.js';

export const STEPS = 3;
export const PAYLOAD_BYTES = 100;
export const CONCURRENCY = 16;
/** A logger that drops warnings, so benchmark output stays JSON lines. */
export const quiet = { warn: (): void => undefined };

const now = (): number => performance.now();

/** The same chain as a workflow function (workflow.fn): each `ctx.step` forwards the payload. */
export const fnChain = defineWorkflow({
  name: 'bench-chain',
  async run(ctx, input: Uint8Array): Promise<Uint8Array> {
    let p = input;
    p = await ctx.step('s1', () => p);
    p = await ctx.step('s2', () => p);
    p = await ctx.step('s3', () => p);
    return p;
  },
});

const forward = async (step: Step) => (step.stepNumber < STEPS - 1 ? StepOutcome.continueNow(step.payload) : StepOutcome.succeed(step.payload));

export interface AckCounter {
  /** Resolves once `n` more step acks have committed. */
  until(n: number): Promise<void>;
}

/**
 * Counts committed step acks by wrapping the queue's two acks a runtime uses (`ackWith`, and
 * `ackContinuing` for an advance that keeps the step's job for its next step): cheaper and more exact
 * than polling stats.
 */
export function countAcks(queue: Queue): AckCounter {
  let acked = 0;
  let waiter: { target: number; resolve: () => void } | undefined;
  const counted = (): void => {
    acked++;
    if (waiter && acked >= waiter.target) waiter.resolve();
  };
  const originalAck = queue.ackWith.bind(queue);
  (queue as { ackWith: Queue['ackWith'] }).ackWith = async (claim: Claim, effects) => {
    const results = await originalAck(claim, effects);
    counted();
    return results;
  };
  const originalContinuing = queue.ackContinuing.bind(queue);
  (queue as { ackContinuing: Queue['ackContinuing'] }).ackContinuing = async (claim: Claim, next, effects) => {
    const continued = await originalContinuing(claim, next, effects);
    counted();
    return continued;
  };
  return { until: (n) => new Promise<void>((resolve) => (waiter = { target: acked + n, resolve })) };
}

/**
 * Resolvers of runs awaited by their terminal ack, by run id (set one before submitting): the
 * wrapped `ackWith` calls a run's once the ack `isTerminal` picks has committed.
 */
export function watchTerminalAcks(queue: Queue, isTerminal: (claim: Claim) => boolean): Map<string, () => void> {
  const waiting = new Map<string, () => void>();
  const originalAck = queue.ackWith.bind(queue);
  (queue as { ackWith: Queue['ackWith'] }).ackWith = async (claim: Claim, effects) => {
    const results = await originalAck(claim, effects);
    if (isTerminal(claim)) waiting.get(claim.job.headers[HEADER_RUN_ID]!)?.();
    return results;
  };
  return waiting;
}

/** Keyed runs: run i gets the concurrency key `user-{i % KEYED_USERS}` with limit 1 (10 runs of a user per 2000, at most one at a time). */
export const KEYED_USERS = 200;

/**
 * Submits `runs` runs (16 submissions in flight), then works them until every step is acked.
 * Returns the submit time and the worker-phase time; `onWorkStart` runs just before the latter.
 * `keyed`: every run under a concurrency key (`KEYED_USERS`).
 */
export async function runChain(
  queue: Queue,
  acks: AckCounter,
  store: ObjectStore,
  runs: number,
  tag: string,
  onWorkStart?: () => void,
  keyed = false,
): Promise<{ submitMs: number; workMs: number }> {
  const runtime = new WorkflowRuntime(queue, store, forward, new NoopTerminalHook(), { maxConcurrentSteps: CONCURRENCY, logger: quiet });
  const payload = new Uint8Array(PAYLOAD_BYTES).fill(42);
  const t0 = now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < runs) {
        const i = next++;
        await runtime.submit({ runId: `${tag}-${i}`, input: payload, ...(keyed ? { concurrency: { key: `user-${i % KEYED_USERS}`, limit: 1 } } : {}) });
      }
    }),
  );
  const submitMs = now() - t0;
  const allAcked = acks.until(runs * STEPS);
  onWorkStart?.();
  const t1 = now();
  const worker = runtime.spawn();
  await allAcked;
  const workMs = now() - t1;
  await worker.shutdown();
  return { submitMs, workMs };
}
