/**
 * Settlement effects: follow-up enqueues and caller KV writes/deletes applied in the same
 * transaction as a settlement (ack, dead-letter, nack that dead-letters, cancel that removes).
 * Prepared once before the retry loop (ids drawn, payloads offloaded), then staged per attempt.
 * Object cleanup: a dedup-downgraded follow-up's object is deleted after commit; when the
 * settlement fails or takes a branch that discards effects, every prepared object is deleted.
 */
import { InvalidArgumentError } from '../../errors.js';
import { prepareEnqueue, validateEnqueue, stageEnqueue, type EnqueueRequest, type EnqueueResult, type PreparedEnqueue } from '../transitions/enqueue.js';
import { userKey } from '../records/keys.js';
import type { QueueContext } from '../queue-context.js';
import type { StagedTxn } from './staged-txn.js';
import { validateKvKey, validateKvValue } from '../records/validation.js';

/** What a settlement applies atomically with itself. */
export interface SettlementEffects {
  readonly enqueues?: readonly EnqueueRequest[];
  /** Caller KV puts (a Map or an array of [key, value] pairs). */
  readonly kvWrites?: Iterable<readonly [Uint8Array, Uint8Array]>;
  readonly kvDeletes?: Iterable<Uint8Array>;
  /**
   * @internal Called once the transaction that applied these effects committed (durably, for a
   * durable settlement), before the settlement returns; never when they were not applied (a
   * failure, a branch that discards effects). The workflow runtime keeps its in-memory copy of
   * records it wrote in step with the store this way (workflow/flow/flow-cache.ts).
   */
  readonly onCommitted?: readonly (() => void)[];
}

export interface PreparedEffects {
  readonly enqueues: readonly PreparedEnqueue[];
  readonly kvWrites: readonly (readonly [Uint8Array, Uint8Array])[];
  readonly kvDeletes: readonly Uint8Array[];
  readonly onCommitted?: readonly (() => void)[];
}

export const NO_EFFECTS: PreparedEffects = { enqueues: [], kvWrites: [], kvDeletes: [] };

/** Validates caller KV writes without I/O (size cap included). */
export function validateKvWrites(writes: Iterable<readonly [Uint8Array, Uint8Array]> | undefined): (readonly [Uint8Array, Uint8Array])[] {
  if (writes === undefined) return [];
  const out: (readonly [Uint8Array, Uint8Array])[] = [];
  for (const pair of writes) {
    if (!Array.isArray(pair) || pair.length !== 2) throw new InvalidArgumentError('kv writes must be [key, value] pairs');
    validateKvKey(pair[0]);
    validateKvValue(pair[1]);
    out.push([pair[0], pair[1]]);
  }
  return out;
}

/** Validates everything first, then offloads follow-up payloads; cleans up on failure. */
export async function prepareEffects(ctx: QueueContext, effects: SettlementEffects | undefined): Promise<PreparedEffects> {
  if (effects === undefined) return NO_EFFECTS;
  if (typeof effects !== 'object' || effects === null) throw new InvalidArgumentError(`effects must be an object. effects=${String(effects)}`);
  if (effects.enqueues === undefined && effects.kvWrites === undefined && effects.kvDeletes === undefined) return NO_EFFECTS;
  const requests = [...(effects.enqueues ?? [])];
  for (const r of requests) validateEnqueue(r?.queue, r?.payload, r?.options);
  const kvWrites = validateKvWrites(effects.kvWrites);
  const kvDeletes = [...(effects.kvDeletes ?? [])];
  for (const k of kvDeletes) validateKvKey(k);
  const prepared: PreparedEnqueue[] = [];
  try {
    for (const r of requests) prepared.push(await prepareEnqueue(ctx, r.queue, r.payload, r.options));
  } catch (e) {
    await discardEffects(ctx, { enqueues: prepared, kvWrites, kvDeletes });
    throw e;
  }
  return { enqueues: prepared, kvWrites, kvDeletes, onCommitted: effects.onCommitted };
}

/**
 * Stages the effects into the settlement's transaction. Results are index-aligned with the
 * enqueues from `firstEnqueue` on (the ones before it were staged by the caller).
 */
export async function stageEffects(ctx: QueueContext, s: StagedTxn, effects: PreparedEffects, firstEnqueue = 0): Promise<EnqueueResult[]> {
  const results: EnqueueResult[] = [];
  for (let i = firstEnqueue; i < effects.enqueues.length; i++) {
    const p = effects.enqueues[i];
    const result = await stageEnqueue(ctx, s, p);
    if (result.type === 'already_enqueued' && p.record.payloadRef !== undefined) {
      const ref = p.record.payloadRef;
      s.afterCommit(() => ctx.payloads.deleteQuietly(ref));
    }
    results.push(result);
  }
  for (const [k, v] of effects.kvWrites) s.put(userKey(k), v);
  for (const k of effects.kvDeletes) s.delete(userKey(k));
  for (const hook of effects.onCommitted ?? []) s.afterCommit(hook);
  return results;
}

/** Deletes the objects of prepared follow-ups that will never be committed. */
export async function discardEffects(ctx: QueueContext, effects: PreparedEffects): Promise<void> {
  await ctx.payloads.deleteAllQuietly(effects.enqueues.map((p) => p.record.payloadRef));
}
