/** The one place that knows the record codec: MessagePack with named fields. */
import { Decoder, Encoder } from '@msgpack/msgpack';

// One encoder and decoder for the process: building them allocates buffers and caches, which
// showed up as a tenth of the queue's CPU time. Both are safe to re-enter (they clone when busy).
const encoder = new Encoder({ ignoreUndefined: true });
const decoder = new Decoder();

export function encodeRecord(value: unknown): Uint8Array {
  return encoder.encode(value);
}

export function decodeRecord(bytes: Uint8Array): unknown {
  return decoder.decode(bytes);
}
