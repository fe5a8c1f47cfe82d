/**
 * Enqueue in two phases. `prepareEnqueue` validates, draws the id and writes an oversized payload
 * to its own object, once, outside any transaction (so ids stay stable across conflict retries).
 * `stageEnqueue` then runs inside the transition's transaction: dedup check, id-override check,
 * record + index + dedup entry + counter.
 */
import { fromUtf8, utf8 } from '../../bytes.js';
import { AlreadyExistsError } from '../../errors.js';
import { notePendingInserts, type QueueContext } from '../queue-context.js';
import type { JobRecord, MutableJobRecord } from '../records/job-record.js';
import { dedupKey, jobIndexKey } from '../records/keys.js';
import type { StagedTxn } from '../storage/staged-txn.js';
import {
  validateDedupKey,
  validateHeaders,
  validateJobId,
  validateMaxAttempts,
  validatePayload,
  validatePriority,
  validateQueueName,
  validateTimestamp,
} from '../records/validation.js';
import { checkOptions, optionNames } from '../../options.js';

/** Options of one enqueue. Unset fields take the queue's configuration. */
export interface EnqueueOptions {
  readonly maxAttempts?: number;
  readonly priority?: number;
  /** Wall time (epoch ms). At or before now ⇒ pending at once; later ⇒ scheduled. */
  readonly runAt?: number;
  /** While a job with this key waits (pending or scheduled) in the queue, enqueues return its id. */
  readonly dedupKey?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Use this id instead of a generated one: 1..128 characters of `[A-Za-z0-9_-]`. */
  readonly idOverride?: string;
}

/** One follow-up enqueue inside settlement effects; options behave exactly as for `enqueue`. */
export interface EnqueueRequest {
  readonly queue: string;
  readonly payload: Uint8Array;
  readonly options?: EnqueueOptions;
}

/** `new`: the job was written. `already_enqueued`: a waiting job had the dedup key; its id. */
export type EnqueueResult = { readonly type: 'new'; readonly id: string } | { readonly type: 'already_enqueued'; readonly id: string };

/** An enqueue whose id, record and payload object are decided. */
export interface PreparedEnqueue {
  readonly record: JobRecord;
  readonly idOverride: boolean;
}

/** Every EnqueueOptions name (add a new option's name here, or enqueue rejects it as unknown). */
const ENQUEUE_OPTION_NAMES = optionNames<EnqueueOptions>({ maxAttempts: true, priority: true, runAt: true, dedupKey: true, headers: true, idOverride: true });

/** Validates an enqueue without I/O. Throws INVALID_ARGUMENT. */
export function validateEnqueue(queue: unknown, payload: unknown, options: EnqueueOptions | undefined): void {
  validateQueueName(queue);
  validatePayload(payload);
  if (options === undefined) return;
  checkOptions(options, ENQUEUE_OPTION_NAMES, 'enqueue', 'INVALID_ARGUMENT');
  if (options.maxAttempts !== undefined) validateMaxAttempts(options.maxAttempts);
  if (options.priority !== undefined) validatePriority(options.priority);
  if (options.runAt !== undefined) validateTimestamp(options.runAt, 'runAt');
  if (options.dedupKey !== undefined) validateDedupKey(options.dedupKey);
  if (options.headers !== undefined) validateHeaders(options.headers);
  if (options.idOverride !== undefined) validateJobId(options.idOverride);
}

/**
 * Validates, assigns the id and offloads the payload if it is over the threshold. On success the
 * caller owns `record.payloadRef` and must delete it if the enqueue does not commit.
 */
export async function prepareEnqueue(ctx: QueueContext, queue: string, payload: Uint8Array, options: EnqueueOptions = {}): Promise<PreparedEnqueue> {
  validateEnqueue(queue, payload, options);
  const record = buildRecord(ctx, queue, payload, options);
  if (ctx.payloads.shouldOffload(payload)) {
    record.payloadRef = await ctx.payloads.write(payload);
  }
  return { record, idOverride: options.idOverride !== undefined };
}

/**
 * The record of a validated enqueue, id drawn, payload inline (the caller offloads it when
 * `ctx.payloads.shouldOffload(payload)`). Synchronous, for batch fast paths.
 */
export function buildRecord(ctx: QueueContext, queue: string, payload: Uint8Array, options: EnqueueOptions = {}): MutableJobRecord {
  const config = ctx.configs.get(queue);
  const now = ctx.clock.now();
  const scheduled = options.runAt !== undefined && options.runAt > now;
  const record: MutableJobRecord = {
    id: options.idOverride ?? ctx.ids.next(),
    queue,
    payload,
    headers: options.headers === undefined ? {} : { ...options.headers },
    status: scheduled ? 'scheduled' : 'pending',
    attempts: 0,
    maxAttempts: options.maxAttempts ?? config.maxAttempts,
    interruptions: 0,
    enqueuedAt: now,
    priority: options.priority ?? config.defaultPriority,
    cancelRequested: false,
  };
  if (scheduled) record.runAt = options.runAt;
  if (options.dedupKey !== undefined) record.dedupKey = options.dedupKey;
  return record;
}

/**
 * Stages one prepared enqueue. A dedup hit stages nothing and returns the owner's id (the dedup
 * check precedes the id check). A taken override id throws ALREADY_EXISTS.
 */
export async function stageEnqueue(ctx: QueueContext, s: StagedTxn, prepared: PreparedEnqueue): Promise<EnqueueResult> {
  const { record } = prepared;
  if (record.dedupKey !== undefined) {
    const owner = await s.get(dedupKey(record.queue, record.dedupKey));
    if (owner !== undefined) return { type: 'already_enqueued', id: fromUtf8(owner) };
  }
  if (prepared.idOverride && (await s.get(jobIndexKey(record.id))) !== undefined) {
    throw new AlreadyExistsError(`job id already in use. id=${record.id}`, { id: record.id, queue: record.queue });
  }
  const key = s.putRecord(record);
  if (record.dedupKey !== undefined) s.put(dedupKey(record.queue, record.dedupKey), utf8(record.id));
  s.count(record.queue, record.status === 'scheduled' ? 'scheduled' : 'pending', 1);
  if (record.status === 'pending') s.afterCommit(() => notePendingInserts(ctx, record.queue, key));
  return { type: 'new', id: record.id };
}
