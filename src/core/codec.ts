/** The one place that knows the record codec: MessagePack with named fields. */
import { decode, encode } from '@msgpack/msgpack';

export function encodeRecord(value: unknown): Uint8Array {
  return encode(value, { ignoreUndefined: true });
}

export function decodeRecord(bytes: Uint8Array): unknown {
  return decode(bytes);
}
