/**
 * Step-output replay (opt-in): the outcome a runner returned, with the effects it staged, is
 * stored before the settlement is attempted, keyed by (run, step, SHA-256 of the step payload).
 * A later delivery of the same step with the same payload (a crash or a lost lease before the
 * ack) settles from the record without invoking the runner. Step errors are never recorded, so
 * retries still run the runner. A record that does not decode is a miss (the runner runs and
 * the record is overwritten). Records are sealed objects (see ../sealed-object.ts: magic `TQSO`,
 * a length and a CRC-32C); one that fails its checks is a miss too, reported through the runtime's
 * warn callback with the object key.
 *
 * A replayed `after` delay or signal timeout is shortened by the time elapsed since the record
 * was stored, so the original schedule is kept.
 */
import { decodeRecord, encodeRecord } from '../../codec.js';
import { isTaqubaError } from '../../errors.js';
import { sha256Hex } from '../../hash.js';
import { openSealedObject, sealObject, type SealedObjectKind } from '../../sealed-object.js';
import type { RuntimeContext } from '../context.js';
import type { StagedKvEffects } from './effects-handle.js';
import { stepOutputObjectKey } from '../keys.js';
import { validateOutcome, type StepOutcome, type Trigger } from './outcome.js';

/** Sealed-object kind of step-output replay records: "TQSO", format 1 (the body is MessagePack). */
const REPLAY_RECORD_KIND: SealedObjectKind = { magic: 0x5451534f, version: 1 };

export interface ReplayRecord {
  readonly storedAtMs: number;
  readonly outcome: StepOutcome;
  readonly effects: StagedKvEffects;
}

async function recordPath(ctx: RuntimeContext, runId: string, step: number, payload: Uint8Array): Promise<string> {
  return stepOutputObjectKey(ctx.memo.prefix, runId, step, await sha256Hex(payload));
}

function decodeReplay(bytes: Uint8Array): ReplayRecord | undefined {
  try {
    const raw = decodeRecord(bytes) as { storedAtMs?: unknown; outcome?: unknown; effects?: { writes?: unknown; deletes?: unknown } };
    if (typeof raw !== 'object' || raw === null || typeof raw.storedAtMs !== 'number') return undefined;
    const outcome = validateOutcome(raw.outcome);
    const writes = raw.effects?.writes ?? [];
    const deletes = raw.effects?.deletes ?? [];
    if (!Array.isArray(writes) || !Array.isArray(deletes)) return undefined;
    for (const w of writes) if (!Array.isArray(w) || w.length !== 2 || !(w[0] instanceof Uint8Array) || !(w[1] instanceof Uint8Array)) return undefined;
    for (const d of deletes) if (!(d instanceof Uint8Array)) return undefined;
    return { storedAtMs: raw.storedAtMs, outcome, effects: { writes: writes as [Uint8Array, Uint8Array][], deletes: deletes as Uint8Array[] } };
  } catch {
    return undefined;
  }
}

/** The stored record for this delivery, or undefined (absent, corrupt or undecodable). Rejects with store errors. */
export async function lookupReplay(ctx: RuntimeContext, runId: string, step: number, payload: Uint8Array): Promise<ReplayRecord | undefined> {
  const path = await recordPath(ctx, runId, step, payload);
  const obj = await ctx.store.get(path);
  if (!obj) return undefined;
  let body: Uint8Array;
  try {
    body = openSealedObject(REPLAY_RECORD_KIND, obj.data, path);
  } catch (e) {
    if (!isTaqubaError(e, 'CORRUPT_DATA')) throw e;
    ctx.warn(`step-output replay record is corrupt; running the step. runId=${runId} step=${step} object=${path} problem=${String(e.details.problem)}`, e);
    return undefined;
  }
  const record = decodeReplay(body);
  if (!record) ctx.warn(`step-output replay record does not decode; running the step. runId=${runId} step=${step} object=${path}`);
  return record;
}

/**
 * Opens a stored replay record for inspection: undefined when it fails its checks or does not
 * decode (inspection reports such a record as unreadable instead of failing).
 */
export function openReplayRecord(bytes: Uint8Array, path: string): ReplayRecord | undefined {
  try {
    return decodeReplay(openSealedObject(REPLAY_RECORD_KIND, bytes, path));
  } catch (e) {
    if (isTaqubaError(e, 'CORRUPT_DATA')) return undefined;
    throw e;
  }
}

/** Stores the record (durable when it resolves). Rejects with store errors. */
export async function writeReplay(ctx: RuntimeContext, runId: string, step: number, payload: Uint8Array, outcome: StepOutcome, effects: StagedKvEffects): Promise<void> {
  const path = await recordPath(ctx, runId, step, payload);
  const bytes = encodeRecord({ storedAtMs: ctx.clock.now(), outcome, effects: { writes: effects.writes, deletes: effects.deletes } });
  await ctx.store.put(path, sealObject(REPLAY_RECORD_KIND, bytes));
}

/** What is left of `delayMs` at `nowMs` for a record stored at `storedAtMs` (never negative; a clock behind the stamp keeps the whole delay). */
export function remainingDelay(storedAtMs: number, nowMs: number, delayMs: number): number {
  const elapsed = nowMs - storedAtMs;
  if (!(elapsed > 0)) return delayMs;
  return Math.max(0, delayMs - elapsed);
}

/** The replayed outcome with its trigger's delay or timeout shortened by the elapsed time. */
export function replayedOutcome(record: ReplayRecord, nowMs: number): StepOutcome {
  const o = record.outcome;
  if (o.type !== 'continue') return o;
  let when: Trigger = o.when;
  if (when.type === 'after') when = { type: 'after', delayMs: remainingDelay(record.storedAtMs, nowMs, when.delayMs) };
  else if (when.type === 'onSignal') when = { ...when, timeoutMs: remainingDelay(record.storedAtMs, nowMs, when.timeoutMs) };
  return { type: 'continue', payload: o.payload, when };
}
