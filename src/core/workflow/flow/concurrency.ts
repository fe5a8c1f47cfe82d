/**
 * Concurrency limits per key: at most `limit` runs of a key active at once, the others waiting
 * durably in the key's list, in submission order.
 *
 * State (keys.ts): `slots/{k}` holds the key's active count, its limit, how many runs wait and the
 * next place in its list, while the key has active or waiting runs (the list is read only when
 * runs wait); `queued/{k}/{seq}` holds each waiting run's
 * step-0 job to be (input inline, or in `input/{run}/{i}` chunks when large). A waiting run has
 * its run record and a step pointer marked `queued` (naming its step-0 job id), so duplicates,
 * status, queries and cancel find it; it has no queue job until admitted.
 *
 * Protocol, each step under the key's lock (flow-locks.ts) and in one transaction:
 * - submit: a raised limit first admits waiting runs (oldest first); then the run is admitted
 *   (active + 1, step 0 enqueued, every step job carrying the key) when fewer than `limit` runs
 *   are active, else queued (its entry, record and pointer written; no job);
 * - ending of an admitted run (every ending path, runs/termination.ts): active − 1, and as many
 *   waiting runs as the limit now allows admitted in the same transaction (step 0 enqueued under
 *   its pre-drawn id, pointer unmarked, entry deleted); the state is deleted once nothing is
 *   active;
 * - cancel of a waiting run: its entry deleted (and the waiting count lowered) with its
 *   termination, if the pointer still marks it queued at that place (else it was admitted meanwhile and is cancelled as an active run).
 * So a crash never loses a waiting run nor frees a slot without its ending: a run whose process
 * was killed keeps its slot until it resumes and ends. Waiting runs wait only for endings: a
 * waiting run is admitted by the ending (or the submission raising the limit) that makes room.
 */
import type { EnqueueOptions } from '../../queue/index.js';
import type { RuntimeContext } from '../context.js';
import { flowInputChunkKey, flowQueuedKey, flowSlotsKey, stepPointerKey } from '../keys.js';
import { encodeStepPointer } from '../records.js';
import { corrupt } from '../errors.js';
import type { EffectsBuilder } from '../runs/termination.js';
import type { SubmitOutcome } from '../runs/submit.js';
import type { ConcurrencyLimit } from './flow-options.js';
import { HEADER_CONCURRENCY_KEY, withFlowLock } from './flow-locks.js';
import { decodeQueuedRun, decodeSlotState, encodeQueuedRun, encodeSlotState, type QueuedRun, type SlotState } from './flow-records.js';
import { flowCache } from './flow-cache.js';
import { enqueueNewRun, newRunRecords, stepZeroRequest, type Admission, type KvPair, type NewRun } from './new-run.js';

/** Inputs up to this size are kept in the waiting run's entry; larger ones in chunks beside it. */
const INLINE_INPUT_BYTES = 64 * 1024;
/** Chunk size of a large input (KV values are capped at 256 KiB). */
const INPUT_CHUNK_BYTES = 192 * 1024;

/** A waiting run and its place in its key's list. */
interface Waiting {
  readonly seq: number;
  readonly run: QueuedRun;
}

/** The key's slot state: as the handle's flow cache remembers it, else read (and remembered). Under the key's lock. */
async function readSlots(ctx: RuntimeContext, key: string): Promise<SlotState | undefined> {
  const cache = flowCache(ctx.queue);
  const known = cache.slotState(ctx.queueName, key);
  if (known !== undefined) return known ?? undefined;
  const bytes = await ctx.queue.kvGet(flowSlotsKey(ctx.queueName, key));
  const state = bytes === undefined ? undefined : decodeSlotState(bytes);
  cache.noteSlotState(ctx.queueName, key, state ?? null);
  return state;
}

/** Effects' `onCommitted` hook that remembers the key's state as those effects leave it. */
const noteSlots =
  (ctx: RuntimeContext, key: string, state: SlotState | null) =>
  (): void =>
    flowCache(ctx.queue).noteSlotState(ctx.queueName, key, state);

async function readWaiting(ctx: RuntimeContext, key: string, seq: number): Promise<QueuedRun | undefined> {
  const bytes = await ctx.queue.kvGet(flowQueuedKey(ctx.queueName, key, seq));
  return bytes === undefined ? undefined : decodeQueuedRun(bytes);
}

/**
 * Takes the first `count` waiting runs of `key` off `state`, oldest first: the runs, and the state
 * without them. Point reads from the list's head (a scan costs far more, over the tombstones of
 * the runs admitted before); a place a cancelled run left empty is skipped once.
 */
async function takeWaiting(ctx: RuntimeContext, key: string, state: SlotState, count: number): Promise<{ runs: Waiting[]; state: SlotState }> {
  const runs: Waiting[] = [];
  const cache = flowCache(ctx.queue);
  let seq = state.headSeq;
  while (runs.length < count && runs.length < state.waiting && seq < state.nextSeq) {
    // Forgotten as taken: if the admission does not commit, the entry is read again.
    const run = cache.takeWaiting(ctx.queueName, key, seq) ?? (await readWaiting(ctx, key, seq));
    if (run !== undefined) runs.push({ seq, run });
    seq++;
  }
  const waiting = state.waiting - runs.length;
  return { runs, state: { ...state, active: state.active + runs.length, waiting, headSeq: waiting === 0 ? state.nextSeq : seq } };
}

function chunkKeys(ctx: RuntimeContext, run: QueuedRun): Uint8Array[] {
  return Array.from({ length: run.chunks }, (_, i) => flowInputChunkKey(ctx.queueName, run.runId, i));
}

async function inputOf(ctx: RuntimeContext, run: QueuedRun): Promise<Uint8Array> {
  if (run.input !== undefined) return run.input;
  const parts: Uint8Array[] = [];
  for (const key of chunkKeys(ctx, run)) {
    const part = await ctx.queue.kvGet(key);
    if (part === undefined) throw corrupt(`a chunk of a waiting run's input is missing. runId=${run.runId}`, { reason: 'inconsistent_run_state', runId: run.runId });
    parts.push(part);
  }
  const input = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    input.set(part, at);
    at += part.length;
  }
  return input;
}

/**
 * Adds the admission of waiting run `w` of `key` to `effects`: its step 0 enqueued, its pointer
 * unmarked, its entry deleted. The job gets a fresh id rather than the one drawn at submission:
 * an id older than the jobs claimed since would move the queue's claim cursor back over their
 * tombstones (queue/transitions/claim-cursor.ts). The registry follows before the commit, as for
 * any settlement.
 */
async function addAdmission(ctx: RuntimeContext, key: string, w: Waiting, effects: EffectsBuilder): Promise<void> {
  const { run } = w;
  const jobId = ctx.queue.nextJobId();
  const options: { -readonly [K in keyof EnqueueOptions]: EnqueueOptions[K] } = { maxAttempts: run.maxAttempts };
  if (run.priority !== undefined) options.priority = run.priority;
  if (run.runAt !== undefined) options.runAt = run.runAt;
  // No dedup key: the entry's deletion in the same transaction admits the run once.
  effects.enqueues.push(stepZeroRequest(ctx.queueName, run.runId, jobId, await inputOf(ctx, run), options, run.headers, { [HEADER_CONCURRENCY_KEY]: key }, false));
  effects.kvWrites.push([stepPointerKey(run.runId), encodeStepPointer({ step: 0, jobId })]);
  effects.kvDeletes.push(flowQueuedKey(ctx.queueName, key, w.seq), ...chunkKeys(ctx, run));
  const entry = ctx.registry.get(run.runId);
  if (entry !== undefined && entry.currentStep === 0 && entry.delivery === undefined) entry.currentJobId = jobId;
}

/** The records of a run that waits for a slot (entry, input chunks, run record and pointer), and its entry. */
function queuedWrites(ctx: RuntimeContext, run: NewRun, key: string, seq: number, runAt: number | undefined): { writes: KvPair[]; entry: QueuedRun } {
  const chunks: KvPair[] = [];
  if (run.input.length > INLINE_INPUT_BYTES) {
    for (let at = 0, i = 0; at < run.input.length; at += INPUT_CHUNK_BYTES, i++) chunks.push([flowInputChunkKey(ctx.queueName, run.runId, i), run.input.subarray(at, at + INPUT_CHUNK_BYTES)]);
  }
  const entry: QueuedRun = {
    runId: run.runId,
    jobId: run.jobId,
    headers: run.headers,
    priority: run.options.priority,
    // Resolved now: the waiting entry is what the admission enqueues, whenever that is.
    maxAttempts: run.options.maxAttempts ?? ctx.queue.queueConfig(ctx.queueName).maxAttempts,
    runAt,
    input: chunks.length === 0 ? run.input : undefined,
    chunks: chunks.length,
  };
  const writes: KvPair[] = [
    [flowQueuedKey(ctx.queueName, key, seq), encodeQueuedRun(entry)],
    ...chunks,
    ...newRunRecords(run, { step: 0, jobId: run.jobId, queued: { queueName: ctx.queueName, key, seq } }),
  ];
  return { writes, entry };
}

/**
 * Submits `run` under the concurrency limit `c`: admitted now, or queued behind the key's active
 * runs. `admission` is what a rate limit decided (start time, its record), kept either way.
 */
export function submitWithConcurrency(ctx: RuntimeContext, run: NewRun, c: ConcurrencyLimit, admission: Admission): Promise<SubmitOutcome> {
  const { key } = c;
  const slotsKey = flowSlotsKey(ctx.queueName, key);
  return withFlowLock(ctx.queue, ctx.queueName, 'concurrency', key, async () => {
    // The latest submission's limit is the key's limit from now on.
    let state: SlotState = { ...((await readSlots(ctx, key)) ?? { active: 0, waiting: 0, headSeq: 0, nextSeq: 0 }), limit: c.limit };
    // A raised limit admits waiting runs first: they came before this one.
    const promoted = await takeWaiting(ctx, key, state, state.limit - state.active);
    if (promoted.runs.length > 0) {
      const effects: EffectsBuilder = { enqueues: [], kvWrites: [], kvDeletes: [] };
      for (const w of promoted.runs) await addAdmission(ctx, key, w, effects);
      state = promoted.state;
      effects.kvWrites.push([slotsKey, encodeSlotState(state)]);
      effects.onCommitted = [noteSlots(ctx, key, state)];
      await ctx.queue.commitEffects(effects);
    }
    if (state.active < state.limit) {
      const admitted = { ...state, active: state.active + 1 };
      const outcome = await enqueueNewRun(ctx, run, {
        ...admission,
        reservedHeaders: { ...admission.reservedHeaders, [HEADER_CONCURRENCY_KEY]: key },
        writes: [...(admission.writes ?? []), [slotsKey, encodeSlotState(admitted)]],
      });
      // A duplicate of a waiting step 0 applies nothing: the state is as it was.
      if (outcome.newlySubmitted) flowCache(ctx.queue).noteSlotState(ctx.queueName, key, admitted);
      return outcome;
    }
    const outcome: SubmitOutcome = { runId: run.runId, newlySubmitted: true, jobId: run.jobId };
    const seq = state.nextSeq;
    const queued = queuedWrites(ctx, run, key, seq, admission.runAt ?? run.options.runAt);
    const waiting = { ...state, waiting: state.waiting + 1, nextSeq: seq + 1 };
    await ctx.queue.commitEffects({
      kvWrites: [...run.kvWrites, ...queued.writes, [slotsKey, encodeSlotState(waiting)], ...(admission.writes ?? []), ...run.answer(outcome)],
      onCommitted: [noteSlots(ctx, key, waiting), () => flowCache(ctx.queue).noteWaiting(ctx.queueName, key, seq, queued.entry)],
    });
    return outcome;
  });
}

/**
 * Adds to `effects` what the ending of a run holding a slot of `key` commits: the slot handed to
 * the next waiting runs the limit allows, or freed. Call under the key's lock, committing before
 * releasing it.
 */
export async function addSlotRelease(ctx: RuntimeContext, key: string, effects: EffectsBuilder): Promise<void> {
  const slotsKey = flowSlotsKey(ctx.queueName, key);
  const state = await readSlots(ctx, key);
  if (state === undefined) {
    // Only a hand-edited store gets here (the state is written with every admission).
    ctx.warn(`a run holding a concurrency slot ended but its key has no state; nothing to release. key=${JSON.stringify(key)}`);
    return;
  }
  const active = Math.max(0, state.active - 1);
  const { runs, state: next } = await takeWaiting(ctx, key, { ...state, active }, state.limit - active);
  for (const w of runs) await addAdmission(ctx, key, w, effects);
  // Waiting runs exist only while the key is full, so nothing active means nothing waiting.
  if (next.active === 0) effects.kvDeletes.push(slotsKey);
  else effects.kvWrites.push([slotsKey, encodeSlotState(next)]);
  (effects.onCommitted ??= []).push(noteSlots(ctx, key, next.active === 0 ? null : next));
}

/**
 * Adds to `effects` the withdrawal of waiting run `run` (at `seq` of `key`): its entry and input
 * chunks deleted, the key's waiting count lowered. Call under the key's lock, committing before
 * releasing it.
 */
export async function addWithdrawal(ctx: RuntimeContext, key: string, seq: number, run: QueuedRun, effects: EffectsBuilder): Promise<void> {
  effects.kvDeletes.push(flowQueuedKey(ctx.queueName, key, seq), ...chunkKeys(ctx, run));
  const state = await readSlots(ctx, key);
  // Whether the withdrawal commits is its caller's to learn: the key is read again next time.
  const cache = flowCache(ctx.queue);
  cache.forgetWaiting(ctx.queueName, key, seq);
  cache.forgetSlotState(ctx.queueName, key);
  if (state !== undefined) effects.kvWrites.push([flowSlotsKey(ctx.queueName, key), encodeSlotState({ ...state, waiting: Math.max(0, state.waiting - 1) })]);
}

/**
 * The slot state write of a run revived by `retryDeadStep` (its ending released its slot; it runs
 * again): it takes a slot back, over the limit if the key is full (it was admitted once already),
 * so its next ending releases a slot it holds. Call under the key's lock, committing before
 * releasing it.
 */
export async function retakeSlot(queue: RuntimeContext['queue'], queueName: string, key: string): Promise<KvPair> {
  // Committed by the caller (a dead job requeued): the key is read again next time.
  flowCache(queue).forgetSlotState(queueName, key);
  const bytes = await queue.kvGet(flowSlotsKey(queueName, key));
  const state = bytes === undefined ? { active: 0, limit: 1, waiting: 0, headSeq: 0, nextSeq: 0 } : decodeSlotState(bytes);
  return [flowSlotsKey(queueName, key), encodeSlotState({ ...state, active: state.active + 1 })];
}
