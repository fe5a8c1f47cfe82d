/**
 * The runtime's stored records, MessagePack maps with named fields: the run record, the
 * current-step pointer, and the notification payload (a committed `RunOutcome`). Decoders throw
 * CORRUPT_DATA (reason `undecodable_record`) on any shape error.
 */
import { decodeRecord, encodeRecord } from '../codec.js';
import { corrupt } from './errors.js';
import type { RunOutcome, TerminalStatus } from './terminal-hook.js';

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
}

function asMap(bytes: Uint8Array, what: string): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = decodeRecord(bytes);
  } catch (e) {
    throw corrupt(`undecodable ${what}. reason=msgpack`, { reason: 'undecodable_record', record: what }, e);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw corrupt(`undecodable ${what}. reason=not_a_map`, { reason: 'undecodable_record', record: what });
  return raw as Record<string, unknown>;
}

function field<T>(map: Record<string, unknown>, name: string, what: string, check: (v: unknown) => boolean): T {
  const v = map[name];
  if (!check(v)) throw corrupt(`undecodable ${what}. field=${name}`, { reason: 'undecodable_record', record: what, field: name });
  return v as T;
}

const isString = (v: unknown): boolean => typeof v === 'string';
const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isBytes = (v: unknown): boolean => v instanceof Uint8Array;

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
  return encodeRecord({ step: p.step, jobId: p.jobId });
}

export function decodeStepPointer(bytes: Uint8Array): StepPointer {
  const m = asMap(bytes, 'step pointer');
  return { step: field(m, 'step', 'step pointer', isCount), jobId: field(m, 'jobId', 'step pointer', isString) };
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
