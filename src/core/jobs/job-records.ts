/**
 * What a job stores. The run input is an envelope `{ n: job name, i: encoded input }`; the
 * outcome record lives in the run memo under `OUTCOME_KEY` (job code sees only the step memo, so
 * no collision) and outlives the run record until retention sweeps the run's memo:
 * `{ v: 1, h: SHA-256(run input), ok: true, o: output bytes }` or
 * `{ v: 1, h, ok: false, r: reason, m: message, e?: error payload bytes }`.
 */
import { decodeRecord, encodeRecord } from '../codec.js';
import { corrupt } from '../workflow/errors.js';
import type { Memo } from '../workflow/steps/memo.js';
import type { JobFailureReason } from './job-errors.js';

export const OUTCOME_KEY = 'workflow.job-outcome';

export interface JobEnvelope {
  readonly name: string;
  readonly input: Uint8Array;
}

/**
 * A job's outcome as a handle decodes it: output and error payload as the bytes of the job's codec.
 * Also the failure that stands in for a run that ended without one (cancelled, dead-lettered), and
 * the form an outcome crosses a boundary in (`WireJobOutcome`).
 */
export type JobOutcome =
  | { readonly ok: true; readonly output: Uint8Array }
  | { readonly ok: false; readonly reason: JobFailureReason; readonly message: string; readonly error?: Uint8Array | undefined };

/** The stored outcome: the job's outcome and the hash of the run input it came from. */
export type OutcomeRecord = JobOutcome & { readonly inputHash: Uint8Array };

export function encodeEnvelope(envelope: JobEnvelope): Uint8Array {
  return encodeRecord({ n: envelope.name, i: envelope.input });
}

/** The envelope, or undefined when `bytes` is not one. */
export function decodeEnvelope(bytes: Uint8Array): JobEnvelope | undefined {
  try {
    const r = decodeRecord(bytes) as { n?: unknown; i?: unknown } | null;
    if (typeof r !== 'object' || r === null || typeof r.n !== 'string' || !(r.i instanceof Uint8Array)) return undefined;
    return { name: r.n, input: r.i };
  } catch {
    return undefined;
  }
}

export function encodeOutcome(record: OutcomeRecord): Uint8Array {
  if (record.ok) return encodeRecord({ v: 1, h: record.inputHash, ok: true, o: record.output });
  return encodeRecord({ v: 1, h: record.inputHash, ok: false, r: record.reason, m: record.message, e: record.error });
}

/** Reads the outcome record of a run; null when absent. CORRUPT_DATA for an undecodable one. */
export async function readOutcome(runMemo: Memo): Promise<OutcomeRecord | null> {
  const bytes = await runMemo.get(OUTCOME_KEY);
  if (bytes === null) return null;
  let r: { v?: unknown; h?: unknown; ok?: unknown; o?: unknown; r?: unknown; m?: unknown; e?: unknown };
  try {
    r = decodeRecord(bytes) as typeof r;
  } catch (e) {
    throw corrupt(`job outcome record does not decode. jobId=${runMemo.runId}`, { reason: 'undecodable_record', runId: runMemo.runId }, e);
  }
  if (typeof r === 'object' && r !== null && r.v === 1 && r.h instanceof Uint8Array) {
    if (r.ok === true && r.o instanceof Uint8Array) return { inputHash: r.h, ok: true, output: r.o };
    if (r.ok === false && typeof r.r === 'string' && typeof r.m === 'string' && (r.e === undefined || r.e instanceof Uint8Array)) {
      return { inputHash: r.h, ok: false, reason: r.r as JobFailureReason, message: r.m, error: r.e };
    }
  }
  throw corrupt(`job outcome record has an unknown shape. jobId=${runMemo.runId}`, { reason: 'undecodable_record', runId: runMemo.runId });
}

export async function writeOutcome(runMemo: Memo, record: OutcomeRecord): Promise<void> {
  await runMemo.put(OUTCOME_KEY, encodeOutcome(record));
}
