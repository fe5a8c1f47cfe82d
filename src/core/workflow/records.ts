/**
 * The runtime's stored records: the run record, the current-step pointer and the notification
 * payload (a committed `RunOutcome`), MessagePack maps with named fields; and the finished-run
 * record, a versioned MessagePack array (one is kept per finished run for days, so its bytes
 * count). Decoders throw CORRUPT_DATA (reason `undecodable_record`) on any shape error.
 */
import { decodeRecord, encodeRecord } from '../codec.js';
import { corrupt } from './errors.js';
import type { RunOutcome, TerminalStatus } from './runs/terminal-hook.js';

/** `workflow/runs/{run}`: exists from submission until the run's terminal settlement. */
export interface RunRecord {
  readonly runId: string;
  readonly submittedAtMs: number;
  /** SHA-256 of the submitted input (32 bytes). */
  readonly inputHash: Uint8Array;
}

/** `workflow/steps/{run}`: the step the run has reached and the queue job that carries it. */
export interface StepPointer {
  readonly step: number;
  readonly jobId: string;
  /**
   * Set while the run waits for a concurrency slot (flow/concurrency.ts): the queue name of its
   * runtime, the key and the run's place in the key's list. `jobId` is then the id drawn at
   * submission, of no job: the admission enqueues step 0 under a fresh id and rewrites the pointer.
   */
  readonly queued?: { readonly queueName: string; readonly key: string; readonly seq: number };
}

/** A record's MessagePack map; CORRUPT_DATA when it is not one. */
export function asMap(bytes: Uint8Array, what: string): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = decodeRecord(bytes);
  } catch (e) {
    throw corrupt(`undecodable ${what}. reason=msgpack`, { reason: 'undecodable_record', record: what }, e);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw corrupt(`undecodable ${what}. reason=not_a_map`, { reason: 'undecodable_record', record: what });
  return raw as Record<string, unknown>;
}

/** A field of a record's map that passes `check`; CORRUPT_DATA naming it otherwise. */
export function field<T>(map: Record<string, unknown>, name: string, what: string, check: (v: unknown) => boolean): T {
  const v = map[name];
  if (!check(v)) throw corrupt(`undecodable ${what}. field=${name}`, { reason: 'undecodable_record', record: what, field: name });
  return v as T;
}

export const isString = (v: unknown): boolean => typeof v === 'string';
export const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
export const isBytes = (v: unknown): boolean => v instanceof Uint8Array;

export function encodeRunRecord(r: RunRecord): Uint8Array {
  return encodeRecord({ runId: r.runId, submittedAtMs: r.submittedAtMs, inputHash: r.inputHash });
}

export function decodeRunRecord(bytes: Uint8Array): RunRecord {
  const m = asMap(bytes, 'run record');
  return {
    runId: field(m, 'runId', 'run record', isString),
    submittedAtMs: field(m, 'submittedAtMs', 'run record', isCount),
    inputHash: field(m, 'inputHash', 'run record', isBytes),
  };
}

export function encodeStepPointer(p: StepPointer): Uint8Array {
  if (p.queued === undefined) return encodeRecord({ step: p.step, jobId: p.jobId });
  return encodeRecord({ step: p.step, jobId: p.jobId, queued: [p.queued.queueName, p.queued.key, p.queued.seq] });
}

const isQueued = (v: unknown): boolean => v === undefined || (Array.isArray(v) && v.length === 3 && isString(v[0]) && isString(v[1]) && isCount(v[2]));

export function decodeStepPointer(bytes: Uint8Array): StepPointer {
  const m = asMap(bytes, 'step pointer');
  const pointer = { step: field<number>(m, 'step', 'step pointer', isCount), jobId: field<string>(m, 'jobId', 'step pointer', isString) };
  const queued = field<[string, string, number] | undefined>(m, 'queued', 'step pointer', isQueued);
  return queued === undefined ? pointer : { ...pointer, queued: { queueName: queued[0], key: queued[1], seq: queued[2] } };
}

const STATUSES = new Set<string>(['succeeded', 'failed', 'cancelled']);

export function encodeRunOutcome(o: RunOutcome): Uint8Array {
  return encodeRecord({ runId: o.runId, status: o.status, result: o.result ?? undefined, error: o.error ?? undefined, headers: o.headers, finalStep: o.finalStep });
}

export function decodeRunOutcome(bytes: Uint8Array): RunOutcome {
  const what = 'notification payload';
  const m = asMap(bytes, what);
  const headers = m.headers ?? {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers) || Object.values(headers).some((v) => typeof v !== 'string')) {
    throw corrupt(`undecodable ${what}. field=headers`, { reason: 'undecodable_record', record: what, field: 'headers' });
  }
  const result = m.result ?? null;
  const error = m.error ?? null;
  if (result !== null && !(result instanceof Uint8Array)) throw corrupt(`undecodable ${what}. field=result`, { reason: 'undecodable_record', record: what, field: 'result' });
  if (error !== null && typeof error !== 'string') throw corrupt(`undecodable ${what}. field=error`, { reason: 'undecodable_record', record: what, field: 'error' });
  return {
    runId: field(m, 'runId', what, isString),
    status: field<TerminalStatus>(m, 'status', what, (v) => typeof v === 'string' && STATUSES.has(v)),
    result,
    error,
    headers: headers as Record<string, string>,
    finalStep: field(m, 'finalStep', what, isCount),
  };
}

/**
 * `workflow/outcomes/{q}/{run}`: how a run ended, written by its terminating settlement when
 * outcome retention is on. The run id and queue name are in the key.
 */
export interface FinishedRunRecord {
  readonly status: TerminalStatus;
  /** `succeeded` only; null when the result was too large to keep (see `resultBytes`). */
  readonly result: Uint8Array | null;
  /** Length of the runner's result; differs from `result`'s only when the result was not kept. */
  readonly resultBytes: number | null;
  /** As `RunOutcome.error`, cut to `MAX_KEPT_ERROR_CHARS`. */
  readonly error: string | null;
  /** Empty when the headers did not fit the record (`headersKept` false). */
  readonly headers: Readonly<Record<string, string>>;
  readonly headersKept: boolean;
  readonly finalStep: number;
  readonly endedAtMs: number;
  readonly submittedAtMs: number | null;
  /** Tries of the final step (its `Step.attempt` when it ended), when the ending settlement knew it. */
  readonly attempts: number | null;
  /** The job that ended the run; kept with `runIdReuse: 'after-retention'` (null otherwise or when unknown). */
  readonly jobId: string | null;
  /** SHA-256 of the run's input, to refuse a resubmission with another one; kept like `jobId`. */
  readonly inputHash: Uint8Array | null;
}

/** Results up to this many bytes are kept in the record; a larger one is left out, its length noted. */
export const MAX_KEPT_RESULT_BYTES = 64 * 1024;
/** Error texts are kept up to this many characters. */
export const MAX_KEPT_ERROR_CHARS = 4096;
/** Records stay under this size (the queue refuses caller-KV values over 256 KiB). */
const MAX_RECORD_BYTES = 128 * 1024;

const FINISHED_RUN_VERSION = 1;
const STATUS_CODES: readonly TerminalStatus[] = ['succeeded', 'failed', 'cancelled'];

/**
 * Layout v1, positional so a record costs no field names:
 * `[1, status (0 succeeded, 1 failed, 2 cancelled), finalStep, endedAtMs, endedAtMs − submittedAtMs | nil,
 *   attempts | nil, result | nil, error | nil, headers map | nil (none or not kept), flags | nil, resultBytes | nil,
 *   final job id | nil, input SHA-256 | nil]`;
 * flags bit 0: headers were left out. Trailing nils are dropped. A newer version number is refused
 * (CORRUPT_DATA) rather than misread.
 */
export function encodeFinishedRun(r: FinishedRunRecord): Uint8Array {
  const error = r.error !== null && r.error.length > MAX_KEPT_ERROR_CHARS ? `${r.error.slice(0, MAX_KEPT_ERROR_CHARS)}…` : r.error;
  const resultBytes = r.result?.length ?? r.resultBytes;
  const result = r.result !== null && r.result.length <= MAX_KEPT_RESULT_BYTES ? r.result : null;
  const build = (headers: Readonly<Record<string, string>> | null, headersLeftOut: boolean): Uint8Array => {
    const fields: unknown[] = [
      FINISHED_RUN_VERSION,
      STATUS_CODES.indexOf(r.status),
      r.finalStep,
      r.endedAtMs,
      r.submittedAtMs === null ? null : r.endedAtMs - r.submittedAtMs,
      r.attempts,
      result,
      error,
      headers !== null && Object.keys(headers).length > 0 ? headers : null,
      headersLeftOut || !r.headersKept ? 1 : null,
      // Only worth its bytes when the result itself was left out.
      result === null && resultBytes !== null && resultBytes > 0 ? resultBytes : null,
      r.jobId,
      r.inputHash,
    ];
    while (fields[fields.length - 1] === null) fields.pop();
    return encodeRecord(fields);
  };
  const full = build(r.headers, false);
  // Headers are the caller's and unbounded: a record must never make the ending settlement fail.
  return full.length <= MAX_RECORD_BYTES ? full : build(null, true);
}

export function decodeFinishedRun(bytes: Uint8Array): FinishedRunRecord {
  const what = 'finished-run record';
  let raw: unknown;
  try {
    raw = decodeRecord(bytes);
  } catch (e) {
    throw corrupt(`undecodable ${what}. reason=msgpack`, { reason: 'undecodable_record', record: what }, e);
  }
  const bad = (name: string): Error => corrupt(`undecodable ${what}. field=${name}`, { reason: 'undecodable_record', record: what, field: name });
  if (!Array.isArray(raw)) throw bad('layout');
  if (raw[0] !== FINISHED_RUN_VERSION) throw bad('version');
  const at = (i: number): unknown => (i < raw.length ? raw[i] : null);
  const status = STATUS_CODES[at(1) as number];
  if (typeof at(1) !== 'number' || status === undefined) throw bad('status');
  const count = (i: number, name: string): number => {
    if (!isCount(at(i))) throw bad(name);
    return at(i) as number;
  };
  const finalStep = count(2, 'finalStep');
  const endedAtMs = count(3, 'endedAtMs');
  const duration = at(4);
  if (duration !== null && !(typeof duration === 'number' && Number.isSafeInteger(duration))) throw bad('submittedAtMs');
  const attempts = at(5) === null ? null : count(5, 'attempts');
  const result = at(6);
  if (result !== null && !(result instanceof Uint8Array)) throw bad('result');
  const error = at(7);
  if (error !== null && typeof error !== 'string') throw bad('error');
  const headers = at(8) ?? {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers) || Object.values(headers).some((v) => typeof v !== 'string')) throw bad('headers');
  const flags = at(9) === null ? 0 : count(9, 'flags');
  const omitted = at(10) === null ? null : count(10, 'resultBytes');
  const jobId = at(11);
  if (jobId !== null && typeof jobId !== 'string') throw bad('jobId');
  const inputHash = at(12);
  if (inputHash !== null && !(inputHash instanceof Uint8Array && inputHash.length === 32)) throw bad('inputHash');
  return {
    status,
    result,
    resultBytes: result !== null ? result.length : omitted,
    error,
    headers: headers as Record<string, string>,
    headersKept: (flags & 1) === 0,
    finalStep,
    endedAtMs,
    submittedAtMs: duration === null ? null : endedAtMs - (duration as number),
    attempts,
    jobId,
    inputHash,
  };
}
