/**
 * Worker loops: claim, hand the job to a handler with a `LeaseHandle` (never the claim itself),
 * settle by the outcome. Wakeups are notify-based: a loop registers for the queue's wakeups
 * before each claim attempt, so an idle worker sleeps until an insert (one insert wakes one idle
 * worker); the poll interval only bounds the wait for out-of-band events.
 *
 * Outcome routing: success ⇒ ack (with the handler's effects); `PermanentFailure` ⇒ dead-letter;
 * any other error ⇒ nack (effects attached through `FailWith` apply only if that nack
 * dead-letters). Settlement failures (CLAIM_LOST included) are logged and the loop goes on;
 * claim failures end the loop with the error. Shutdown through the AbortSignal is honoured
 * between jobs: the loop stops claiming and in-flight jobs always finish and settle.
 *
 * Pipelined settlement: a job's slot is freed once its settlement's commit is issued (the engine
 * applies it at once, so the next handler sees it); the wait for the WAL put happens off the slot,
 * so the loop claims and runs more jobs while a put is in flight, and every settlement made
 * meanwhile shares the next put (group commit) instead of each round of `concurrency` jobs waiting
 * for its own. Settlements waiting are capped too. A loop resolves only once every settlement it
 * made is durable (or failed and was logged).
 *
 * Logging (the queue's logger, once the settlement went through): a retry at warn (queue, job id,
 * attempt, error, next delay), a dead letter at error (queue, job id, reason); the stack of a
 * thrown value other than `PermanentFailure` comes along.
 */
import { HandlerSlots, type HandlerSlot } from './handler-slots.js';
import type { SettlementEffects } from '../storage/effects.js';
import type { Claim } from '../transitions/claim.js';
import { DEFAULT_POLL_INTERVAL_MS } from '../constants.js';
import type { JobRecord } from '../records/job-record.js';
import type { LeaseHandle } from '../leases/lease-handle.js';
import type { Waiter } from './notifier.js';
import type { LoopSettlement, Queue } from '../queue.js';
import { validateCount, validateDuration, validateQueueName } from '../records/validation.js';
import { InvalidArgumentError } from '../../errors.js';
import { errorFields } from '../../logger.js';
import { retryBackoffMs } from '../transitions/retry-backoff.js';
import { checkOptions, optionNames } from '../../options.js';

/** Thrown by a handler: dead-letter the job now, whatever attempts remain. */
export class PermanentFailure extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'PermanentFailure';
  }
}

/**
 * Thrown by a handler: a transient failure whose next attempt must wait at least `retryAfterMs`
 * (e.g. an HTTP `Retry-After`); the retry runs at now + max(queue backoff, retryAfterMs). Counts
 * as an attempt like any other failure, so out of attempts it dead-letters.
 */
export class RetryLater extends Error {
  constructor(
    reason: string,
    readonly retryAfterMs: number,
  ) {
    super(reason);
    this.name = 'RetryLater';
    // A bad delay must not make the settlement itself fail (the job would sit claimed).
    this.retryAfterMs = Number.isFinite(retryAfterMs) && retryAfterMs > 0 ? retryAfterMs : 0;
  }
}

/** Thrown by a handler: fail with `error` and attach settlement effects to the failure. */
export class FailWith extends Error {
  constructor(
    readonly error: unknown,
    readonly effects: SettlementEffects,
  ) {
    super(describeError(error));
    this.name = 'FailWith';
  }
}

/**
 * A job handler. Implement one hook: `process` (success acks with no effects) or
 * `processWithEffects` (success acks with the returned effects). A plain function works too.
 */
export interface QueueWorker {
  process?(job: JobRecord, lease: LeaseHandle): Promise<void>;
  processWithEffects?(job: JobRecord, lease: LeaseHandle): Promise<SettlementEffects | void>;
}

export type WorkerHandler = QueueWorker | ((job: JobRecord, lease: LeaseHandle) => Promise<SettlementEffects | void>);

export interface RunWorkerOptions {
  /** Longest idle wait between claim attempts when no wakeup comes. Default 1 s. */
  readonly pollIntervalMs?: number;
  /** Abort to shut down: stop claiming, finish and settle in-flight jobs, then resolve. */
  readonly signal?: AbortSignal;
}

/**
 * Every RunWorkerOptions option name. Adding an option: add its name here too (the compiler
 * insists), or the worker loops reject it as unknown (INVALID_CONFIG naming the nearest name).
 */
const RUN_WORKER_OPTION_NAMES = optionNames<RunWorkerOptions>({ pollIntervalMs: true, signal: true });

function describeError(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}

async function invoke(worker: WorkerHandler, job: JobRecord, lease: LeaseHandle): Promise<SettlementEffects | void> {
  if (typeof worker === 'function') return worker(job, lease);
  if (worker.processWithEffects) return worker.processWithEffects(job, lease);
  if (worker.process) return worker.process(job, lease);
  throw new InvalidArgumentError('worker implements neither process nor processWithEffects');
}

function checkWorker(worker: unknown): asserts worker is WorkerHandler {
  const ok =
    typeof worker === 'function' ||
    (typeof worker === 'object' && worker !== null && (typeof (worker as QueueWorker).process === 'function' || typeof (worker as QueueWorker).processWithEffects === 'function'));
  if (!ok) throw new InvalidArgumentError('worker must be a function or implement process / processWithEffects');
}

/** Runs the handler on one claim and settles it. Never rejects: failures are logged. */
export async function processClaim(queue: Queue, claim: Claim, worker: WorkerHandler): Promise<void> {
  return processAndSettle(queue, claim, worker, undefined);
}

/**
 * `processClaim` that calls `issued` once the settlement's commit is issued (so it is applied,
 * unless it conflicts), before its durability is awaited; never when the settlement fails first.
 * Resolves once the settlement is durable or failed (and logged).
 */
async function processAndSettle(queue: Queue, claim: Claim, worker: WorkerHandler, issued: (() => void) | undefined): Promise<void> {
  let effects: SettlementEffects | void;
  try {
    effects = await invoke(worker, claim.job, claim.lease);
  } catch (thrown) {
    const wrapped = thrown instanceof FailWith ? thrown : undefined;
    const error = wrapped ? wrapped.error : thrown;
    const failureEffects = wrapped?.effects ?? {};
    const reason = describeError(error);
    const permanent = error instanceof PermanentFailure;
    try {
      if (permanent) await settleWith(queue, claim, { type: 'dead', reason, effects: failureEffects }, issued);
      else if (error instanceof RetryLater) await settleWith(queue, claim, { type: 'nack', error: reason, effects: failureEffects, options: { retryAfterMs: error.retryAfterMs } }, issued);
      else await settleWith(queue, claim, { type: 'nack', error: reason, effects: failureEffects }, issued);
    } catch (e) {
      queue.logger.warn(`settling a failed job failed. queue=${claim.queue} id=${claim.id}`, e);
      return;
    }
    const job = claim.job;
    const { stack } = errorFields(error, !permanent);
    const fields = { queue: claim.queue, jobId: claim.id, attempt: job.attempts, maxAttempts: job.maxAttempts };
    const trace = stack === undefined ? {} : { stack };
    if (permanent || job.attempts >= job.maxAttempts) queue.logger.error('job dead-lettered', { ...fields, reason, ...trace });
    else {
      const backoff = retryBackoffMs(queue.queueConfig(claim.queue), job.attempts);
      const nextDelayMs = error instanceof RetryLater ? Math.max(backoff, error.retryAfterMs) : backoff;
      queue.logger.warn('job failed; retrying', { ...fields, error: reason, nextDelayMs, ...trace });
    }
    return;
  }
  try {
    await settleWith(queue, claim, { type: 'ack', effects: effects ?? {} }, issued);
  } catch (e) {
    queue.logger.warn(`ack failed. queue=${claim.queue} id=${claim.id}`, e);
  }
}

function settleWith(queue: Queue, claim: Claim, outcome: LoopSettlement, issued: (() => void) | undefined): Promise<unknown> {
  if (issued !== undefined) return queue.settleInLoop(claim, outcome, issued);
  if (outcome.type === 'ack') return queue.ackWith(claim, outcome.effects);
  if (outcome.type === 'nack') return queue.nackWith(claim, outcome.error, outcome.effects, outcome.options);
  return queue.deadLetterWith(claim, outcome.reason, outcome.effects);
}

function validateLoop(queueName: string, worker: unknown, options: RunWorkerOptions): number {
  validateQueueName(queueName);
  checkWorker(worker);
  checkOptions(options, RUN_WORKER_OPTION_NAMES, 'worker');
  const poll = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  validateDuration(poll, 'pollIntervalMs');
  return poll;
}

/**
 * Processes jobs of `queueName` one at a time until `options.signal` aborts. Resolves after the
 * in-flight job settled; rejects with the error of a failed claim (INVALID_ARGUMENT, CLOSED,
 * FENCED, store errors).
 */
export async function runWorker(queue: Queue, queueName: string, worker: WorkerHandler, options: RunWorkerOptions = {}): Promise<void> {
  return runWorkerConcurrent(queue, queueName, worker, 1, options);
}

/**
 * Keeps up to `concurrency` handlers of `queueName` running, claiming batches sized to the free
 * capacity, until `options.signal` aborts; then drains in-flight jobs (no timeout) and resolves
 * once their settlements are durable. A slot frees when its settlement is issued; settlements
 * waiting for their WAL put are capped at max(256, 32 × concurrency).
 */
export async function runWorkerConcurrent(queue: Queue, queueName: string, worker: WorkerHandler, concurrency: number, options: RunWorkerOptions = {}): Promise<void> {
  const poll = validateLoop(queueName, worker, options);
  validateCount(concurrency, 'concurrency');
  if (concurrency < 1) throw new InvalidArgumentError(`concurrency must be at least 1. concurrency=${concurrency}`);
  return runClaimLoop(queue, queueName, concurrency, poll, options.signal, (claim, issued) => processAndSettle(queue, claim, worker, issued));
}

/**
 * @internal The one worker loop, shared by `runWorkerConcurrent` and the workflow runtime. Keeps
 * up to `concurrency` calls of `handle` running on claims of `queueName` (arguments already
 * validated), claiming batches sized to the free capacity. `handle` gets an `issued` callback to
 * call when the job no longer needs its slot (its settlement's commit is issued); it must never
 * reject. It may also pass a claim its settlement kept (`Queue.ackContinuing`) to `resume`:
 * such claims get the next free slots before anything is claimed, and are run even once `signal`
 * aborted (they are held already). `slot` lets the job give its slot up while it waits for a
 * durable write of its own and take one back, ahead of new claims (handler-slots.ts). Idle, the
 * loop registers for the queue's wakeups before each claim attempt and sleeps until an insert or `pollIntervalMs`; a resumed claim interrupts that
 * sleep without ending it (no new scan until an insert or the deadline). When `signal` aborts it stops
 * claiming and resolves once every started job has settled; a failed claim rejects, after the
 * same wait.
 */
export async function runClaimLoop(
  queue: Queue,
  queueName: string,
  concurrency: number,
  pollIntervalMs: number,
  signal: AbortSignal | undefined,
  handle: (claim: Claim, issued: () => void, resume: (taken: Claim) => void, slot: HandlerSlot) => Promise<void>,
): Promise<void> {
  const leaseMs = queue.queueConfig(queueName).leaseMs;
  const notify = queue.notifierOf(queueName);
  const slots = new HandlerSlots(concurrency);
  const resumed: Claim[] = [];
  // Set while the loop waits for an insert: a resumed claim interrupts that wait.
  let endIdleWait: (() => void) | undefined;
  const resume = (taken: Claim): void => {
    resumed.push(taken);
    slots.wakeLoop();
    endIdleWait?.();
  };
  const startResumed = (): void => {
    while (resumed.length > 0 && slots.free > 0) {
      const taken = resumed.shift()!;
      slots.start((issued, slot) => handle(taken, issued, resume, slot));
    }
  };
  // The wait for an insert after a scan that found nothing. A resumed claim interrupts it but
  // does not end it: no insert was announced since that scan, so scanning again would find
  // nothing new, and the wait goes on to its first deadline. Ended when it resolves, or when the
  // loop has no free slot (its waiter must not sit on a wakeup another loop could use).
  let idle: { readonly waiter: Waiter; readonly over: Promise<boolean> } | undefined;
  const endIdle = (): void => {
    idle?.waiter.dispose();
    idle = undefined;
  };
  signal?.addEventListener('abort', slots.wakeLoop, { once: true });
  try {
    while (!signal?.aborted) {
      startResumed();
      const free = slots.free;
      if (free === 0) {
        endIdle();
        await slots.sleep();
        continue;
      }
      if (!idle) {
        const waiter = notify.register();
        let claims: Claim[];
        try {
          claims = await queue.claimBatch(queueName, free, leaseMs);
        } catch (error) {
          waiter.dispose();
          throw error;
        }
        if (claims.length > 0) {
          waiter.dispose();
          // A full batch suggests a backlog: pass one wakeup on to another idle worker.
          if (claims.length === free) notify.notifyOne();
          for (const claim of claims) slots.start((issued, slot) => handle(claim, issued, resume, slot));
          continue;
        }
        idle = { waiter, over: waiter.wait(pollIntervalMs, signal).then(() => true) };
      }
      // Claims resumed during the scan run first; the wait stays.
      if (resumed.length > 0) continue;
      const over = await Promise.race([idle.over, new Promise<boolean>((resolve) => (endIdleWait = () => resolve(false)))]);
      endIdleWait = undefined;
      if (over) endIdle();
    }
  } finally {
    endIdle();
    signal?.removeEventListener('abort', slots.wakeLoop);
    // Draining: claims resumed meanwhile are held already, so they run too.
    for (;;) {
      startResumed();
      if (slots.idle) break;
      await slots.sleep();
    }
  }
}
