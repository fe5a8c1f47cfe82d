/**
 * A signal's value as `runtime.signal(runId, name, value)` sends it (the value codec's encoding
 * behind a mark byte) and as a run receives it, raw payloads included.
 */
import { fromUtf8 } from '../../bytes.js';
import { decodeValue, encodeValue } from '../../codec.js';
import { InvalidArgumentError } from '../../errors.js';

/** Marks a payload encoded by `encodeSignalValue` (0xc1 never starts a MessagePack value). */
const SIGNAL_VALUE_MARK = 0xc1;

/** A signal value as `runtime.signal(runId, name, value)` sends it. INVALID_ARGUMENT for a value the codec cannot store. */
export function encodeSignalValue(value: unknown): Uint8Array {
  let body: Uint8Array;
  try {
    body = encodeValue(value);
  } catch (e) {
    throw new InvalidArgumentError(`signal value cannot be stored: ${e instanceof Error ? e.message : String(e)}`, { reason: 'unstorable_signal_value' });
  }
  const out = new Uint8Array(body.length + 1);
  out[0] = SIGNAL_VALUE_MARK;
  out.set(body, 1);
  return out;
}

/**
 * A signal's value: what `encodeSignalValue` encoded; a raw payload (the CLI's text, a
 * `signal(key, bytes)` call) is handed over as its UTF-8 text, or as bytes if it is not text.
 */
export function decodeSignalValue(bytes: Uint8Array): unknown {
  if (bytes[0] === SIGNAL_VALUE_MARK) return decodeValue(bytes.subarray(1));
  try {
    return fromUtf8(bytes);
  } catch {
    return bytes;
  }
}
