/**
 * Durable signals: a step parks its run on a correlation key (`StepOutcome.continueOnSignal`);
 * `runtime.signal(key, payload)` wakes it, or buffers the payload for the next waiter.
 *
 * State (caller KV): `signal-wait/{key}` names the scheduled waiter job; `signal-buf/{key}` holds
 * one buffered payload (latest wins); `signal-delivered/{run}/{step}` holds a payload consumed on
 * a step's behalf until that step's acknowledging settlement deletes it. The waiter itself is a
 * scheduled queue job (run at the timeout), so a wait survives restarts and occupies no worker;
 * a woken job keeps its wake payload across redeliveries, so every attempt sees the same signal.
 *
 * Every operation on one key runs under that key's lock. The locks belong to the `Queue` handle,
 * not to a runtime (`signalLocksOf`): every runtime on the handle, whatever its queue name, takes
 * the same lock for a key, because the signal state is one caller-KV namespace per handle. The
 * handle is the store's single writer, so no other process can interleave. (With a lock per
 * runtime, a signal sent through a second runtime could read the index before the first
 * runtime's registration committed it, buffer, and leave the waiter parked until its timeout.)
 * - registration (inside the settlement that returns `onSignal`): 1. a live waiter (index names a
 *   scheduled job) fails the registering run; 2. a buffered payload is consumed: the next step
 *   runs at once with a delivered record; 3. otherwise the next step is scheduled at now+timeout
 *   and the index names it. The lock is held until the settlement committed, so a signal sent
 *   meanwhile waits and then finds the index.
 * - `signal`: 1. index names a scheduled job ⇒ wake it with the payload, drop the index
 *   (`delivered`); 2. otherwise (no index, or a stale one, which is dropped) ⇒ store the payload in
 *   the buffer (`buffered`); but a signal only an active run may take (`RuntimeContext.signalRunOf`:
 *   a workflow function's `<runId>#<name>`) is buffered only while its run record exists, checked
 *   under the run's ending lock, and else answered `run-not-active` with nothing kept: a run that
 *   has ended or not started leaves no signal for a later run under the id.
 * - claim of a waiter: drop the index if it names this job; woken ⇒ the wake payload; timed out ⇒
 *   a delivered record left by an earlier attempt, else a buffered payload (consumed into a
 *   delivered record first), else null.
 */
import { perHandle } from '../handle-state.js';
import { utf8 } from '../../bytes.js';
import { KeyedMutex } from '../../keyed-mutex.js';
import type { JobRecord } from '../../queue/index.js';
import type { RuntimeContext } from '../context.js';
import type { CommandRecord } from '../commands/ledger.js';
import { HEADER_SIGNAL_DELIVERED, HEADER_SIGNAL_WAIT } from '../constants.js';
import { checkKvValue } from '../validation.js';
import { runRecordKey, signalBufferKey, signalDeliveredKey, signalWaitKey } from '../keys.js';
import { checkCorrelationKey } from '../steps/outcome.js';

/** The per-correlation-key signal locks of a queue handle, shared by every runtime built on it. */
export const signalLocksOf = perHandle(() => new KeyedMutex());

/**
 * `delivered`: a waiting run was woken. `buffered`: held for the next waiter of the key.
 * `run-not-active`: a workflow function's signal for a run that has ended or not started; dropped.
 */
export type SignalOutcome = 'delivered' | 'buffered' | 'run-not-active';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function decodeJobId(bytes: Uint8Array): string | undefined {
  try {
    const id = strictUtf8.decode(bytes);
    return id.length > 0 ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The waiter the index names, if that job is still scheduled (a live waiter). */
async function liveWaiter(ctx: RuntimeContext, index: Uint8Array): Promise<string | undefined> {
  const id = decodeJobId(index);
  if (id === undefined) return undefined;
  const job = await ctx.queue.getJob(id);
  return job?.status === 'scheduled' ? id : undefined;
}

/** `record`: the command being applied, whose answer commits with the wake or the buffering (commands/ledger.ts). */
export async function sendSignal(ctx: RuntimeContext, correlationKey: string, payload: Uint8Array, record?: CommandRecord): Promise<SignalOutcome> {
  checkCorrelationKey(correlationKey);
  const bufKey = signalBufferKey(correlationKey);
  checkKvValue(bufKey, payload);
  const waitKey = signalWaitKey(correlationKey);
  return ctx.signalLocks.run(correlationKey, async () => {
    const index = await ctx.queue.kvGet(waitKey);
    if (index !== undefined) {
      const id = decodeJobId(index);
      const woken = id !== undefined && (await ctx.queue.wakeScheduled(id, payload, record?.writes('delivered' satisfies SignalOutcome))) === 'woken';
      // Woken: the waiter no longer needs the index. Not woken: the index is stale (the waiter
      // timed out, was cancelled, or is gone). Either way it goes.
      await ctx.queue.kvCompareDelete(waitKey, index);
      if (woken) return 'delivered';
    }
    const buffer = async (): Promise<SignalOutcome> => {
      ctx.signalWatch.buffering(correlationKey);
      if (record) await ctx.queue.commitEffects({ kvWrites: [[bufKey, payload], ...record.writes('buffered' satisfies SignalOutcome)] });
      else await ctx.queue.kvPut(bufKey, payload);
      return 'buffered';
    };
    const runId = ctx.signalRunOf?.(correlationKey);
    if (runId === undefined) return buffer();
    return ctx.endingLocks.run(runId, async () => ((await ctx.queue.kvGet(runRecordKey(runId))) === undefined ? 'run-not-active' : buffer()));
  });
}

export async function clearBufferedSignal(ctx: RuntimeContext, correlationKey: string): Promise<boolean> {
  checkCorrelationKey(correlationKey);
  const key = signalBufferKey(correlationKey);
  for (;;) {
    const current = await ctx.queue.kvGet(key);
    if (current === undefined) return false;
    if (await ctx.queue.kvCompareDelete(key, current)) return true;
  }
}

/** What a registration decided, before its settlement commits. */
export type RegistrationPlan =
  | { readonly type: 'duplicate_waiter'; readonly waiterJobId: string }
  | { readonly type: 'buffered'; readonly payload: Uint8Array }
  | { readonly type: 'wait' };

/** Steps 1–2 of registration (reads only). Call under the key's lock and commit before releasing it. */
export async function planRegistration(ctx: RuntimeContext, correlationKey: string): Promise<RegistrationPlan> {
  const index = await ctx.queue.kvGet(signalWaitKey(correlationKey));
  if (index !== undefined) {
    const live = await liveWaiter(ctx, index);
    if (live !== undefined) return { type: 'duplicate_waiter', waiterJobId: live };
  }
  const buffered = await ctx.queue.kvGet(signalBufferKey(correlationKey));
  if (buffered !== undefined) return { type: 'buffered', payload: buffered };
  return { type: 'wait' };
}

/** The signal of one delivery and the keys its acknowledging settlement must delete. */
export interface ResolvedSignal {
  readonly payload: Uint8Array | null;
  readonly deletes: Uint8Array[];
}

const NONE: ResolvedSignal = { payload: null, deletes: [] };

/** The resolution of a step that did not wait for a signal. */
export const NO_SIGNAL: ResolvedSignal = NONE;

/** Whether a step job carries a signal to resolve (only then does `resolveSignal` do I/O). */
export function waitsForSignal(job: JobRecord): boolean {
  return job.headers[HEADER_SIGNAL_DELIVERED] !== undefined || job.headers[HEADER_SIGNAL_WAIT] !== undefined;
}

/** Resolves `step.signalPayload` for a claimed step job. Rejects with store errors (the step retries). */
export async function resolveSignal(ctx: RuntimeContext, job: JobRecord, runId: string, step: number): Promise<ResolvedSignal> {
  const deliveredKey = signalDeliveredKey(runId, step);
  if (job.headers[HEADER_SIGNAL_DELIVERED] !== undefined) {
    const payload = await ctx.queue.kvGet(deliveredKey);
    if (payload === undefined) ctx.warn(`delivered signal record missing; the step sees no signal. runId=${runId} step=${step}`);
    return { payload: payload ?? null, deletes: [deliveredKey] };
  }
  const correlationKey = job.headers[HEADER_SIGNAL_WAIT];
  if (correlationKey === undefined) return NONE;
  return ctx.signalLocks.run(correlationKey, async () => {
    await ctx.queue.kvCompareDelete(signalWaitKey(correlationKey), utf8(job.id));
    if (job.wokenAt !== undefined) return { payload: job.wakePayload ?? new Uint8Array(0), deletes: [] };
    // Timed out. An earlier attempt may have consumed a buffered signal already.
    const delivered = await ctx.queue.kvGet(deliveredKey);
    if (delivered !== undefined) return { payload: delivered, deletes: [deliveredKey] };
    const bufKey = signalBufferKey(correlationKey);
    const buffered = await ctx.queue.kvGet(bufKey);
    if (buffered === undefined) return NONE;
    // A signal that arrived after the wait stopped being wakeable: consume it for this step.
    await ctx.queue.kvPut(deliveredKey, buffered);
    await ctx.queue.kvCompareDelete(bufKey, buffered);
    return { payload: buffered, deletes: [deliveredKey] };
  });
}

