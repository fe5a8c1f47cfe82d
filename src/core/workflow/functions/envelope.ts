/**
 * The payload of a workflow function's underlying steps: which workflow and version, the encoded
 * input, and (from step 1 on) the run's history generation. Step 0's payload is the run's input,
 * so `submit`'s idempotency compares workflow, version and input at once.
 *
 * Layout: MessagePack `[1, name, version, input bytes, generation?]`.
 */
import { decodeRecord, encodeRecord } from '../../codec.js';
import { InvalidArgumentError } from '../../errors.js';

const ENVELOPE_VERSION = 1;

export interface Envelope {
  readonly name: string;
  readonly version: number;
  readonly input: Uint8Array;
  /** The history generation (history.ts); absent in step 0's payload, which is the submission's. */
  readonly gen?: string;
}

export function encodeEnvelope(e: Envelope): Uint8Array {
  return encodeRecord(e.gen === undefined ? [ENVELOPE_VERSION, e.name, e.version, e.input] : [ENVELOPE_VERSION, e.name, e.version, e.input, e.gen]);
}

/** INVALID_ARGUMENT (reason `not_a_workflow_run`) for a payload that is not an envelope (a run submitted with `submit` to a functions runtime). */
export function decodeEnvelope(bytes: Uint8Array, runId: string): Envelope {
  let raw: unknown;
  try {
    raw = decodeRecord(bytes);
  } catch {
    raw = undefined;
  }
  if (!Array.isArray(raw) || raw[0] !== ENVELOPE_VERSION || typeof raw[1] !== 'string' || typeof raw[2] !== 'number' || !(raw[3] instanceof Uint8Array) || (raw.length > 4 && typeof raw[4] !== 'string')) {
    throw new InvalidArgumentError(`run ${runId} was not started by runtime.start: its input is not a workflow function's (submit it with start(workflow, input))`, { reason: 'not_a_workflow_run', runId });
  }
  return raw.length > 4 ? { name: raw[1], version: raw[2], input: raw[3], gen: raw[4] as string } : { name: raw[1], version: raw[2], input: raw[3] };
}
