/**
 * The stored records of flow control (keys in keys.ts), MessagePack maps with named fields.
 * Decoders throw CORRUPT_DATA (reason `undecodable_record`) on any shape error.
 */
import { encodeRecord } from '../../codec.js';
import { corrupt } from '../errors.js';
import { asMap, field, isBytes, isCount, isString } from '../records.js';

/** `slots/{k}`: a concurrency key while it has active or waiting runs. */
export interface SlotState {
  /** Runs of the key admitted and not ended. */
  readonly active: number;
  /** The limit of the latest submission with the key. */
  readonly limit: number;
  /** Runs of the key waiting for a slot (its list's length, so an ending with none reads no list). */
  readonly waiting: number;
  /** The places of the waiting runs are in [headSeq, nextSeq) (a cancelled run leaves a gap). */
  readonly headSeq: number;
  /** The place the next waiting run takes in the key's list. */
  readonly nextSeq: number;
}

/** `queued/{k}/{seq}`: a run waiting for a slot, with everything its step-0 job needs. */
export interface QueuedRun {
  readonly runId: string;
  /** The job id drawn at submission, which the step pointer and the submission's answer name until admission (its step 0 then gets a fresh one). */
  readonly jobId: string;
  /** The run's headers, without the reserved ones. */
  readonly headers: Readonly<Record<string, string>>;
  readonly priority: number | undefined;
  readonly maxAttempts: number;
  readonly runAt: number | undefined;
  /** The input when stored inline; else it is in `chunks` records of `input/{run}/{i}`. */
  readonly input: Uint8Array | undefined;
  readonly chunks: number;
}

/** `debounce/{k}`: the run of a key's open window and the scheduled step-0 job carrying its input. */
export interface DebounceWindow {
  readonly runId: string;
  readonly jobId: string;
}

const isHeaders = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v as Record<string, unknown>).every((x) => typeof x === 'string');
const isOptionalCount = (v: unknown): boolean => v === undefined || isCount(v);

export const encodeSlotState = (s: SlotState): Uint8Array => encodeRecord({ active: s.active, limit: s.limit, waiting: s.waiting, headSeq: s.headSeq, nextSeq: s.nextSeq });

export function decodeSlotState(bytes: Uint8Array): SlotState {
  const what = 'flow slot state';
  const m = asMap(bytes, what);
  return {
    active: field(m, 'active', what, isCount),
    limit: field(m, 'limit', what, isCount),
    waiting: field(m, 'waiting', what, isCount),
    headSeq: field(m, 'headSeq', what, isCount),
    nextSeq: field(m, 'nextSeq', what, isCount),
  };
}

export function encodeQueuedRun(q: QueuedRun): Uint8Array {
  return encodeRecord({
    runId: q.runId,
    jobId: q.jobId,
    headers: q.headers,
    priority: q.priority,
    maxAttempts: q.maxAttempts,
    runAt: q.runAt,
    input: q.input,
    chunks: q.chunks === 0 ? undefined : q.chunks,
  });
}

export function decodeQueuedRun(bytes: Uint8Array): QueuedRun {
  const what = 'queued run';
  const m = asMap(bytes, what);
  const input = field<Uint8Array | undefined>(m, 'input', what, (v) => v === undefined || isBytes(v));
  const chunks = field<number | undefined>(m, 'chunks', what, isOptionalCount) ?? 0;
  if (input === undefined && chunks === 0) throw corrupt(`undecodable ${what}. field=input`, { reason: 'undecodable_record', record: what, field: 'input' });
  return {
    runId: field(m, 'runId', what, isString),
    jobId: field(m, 'jobId', what, isString),
    headers: field(m, 'headers', what, isHeaders),
    priority: field(m, 'priority', what, isOptionalCount),
    maxAttempts: field(m, 'maxAttempts', what, isCount),
    runAt: field(m, 'runAt', what, isOptionalCount),
    input,
    chunks,
  };
}

/** `rate/{k}`: the last starts of the key, oldest first, as `[time, count]` pairs flattened. */
export interface RateStarts {
  readonly starts: readonly number[];
  /**
   * When the record stops binding anything: the last start plus the period it was written with.
   * Swept after that (rate-limit.ts). Undefined in a record written before it was kept (never swept).
   */
  readonly until: number | undefined;
}

export const encodeRateStarts = (r: RateStarts): Uint8Array => encodeRecord({ starts: r.starts, until: r.until });

export function decodeRateStarts(bytes: Uint8Array): RateStarts {
  const what = 'rate-limit record';
  const m = asMap(bytes, what);
  return {
    starts: field(m, 'starts', what, (v) => Array.isArray(v) && v.length % 2 === 0 && v.every(isCount)),
    until: field(m, 'until', what, isOptionalCount),
  };
}

export const encodeDebounceWindow = (w: DebounceWindow): Uint8Array => encodeRecord({ runId: w.runId, jobId: w.jobId });

export function decodeDebounceWindow(bytes: Uint8Array): DebounceWindow {
  const what = 'debounce window';
  const m = asMap(bytes, what);
  return { runId: field(m, 'runId', what, isString), jobId: field(m, 'jobId', what, isString) };
}
