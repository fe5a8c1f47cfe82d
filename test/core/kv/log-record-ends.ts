import { RECORD_HEADER_BYTES } from '../../../src/core/kv/wal/log-format.js';

/** Offsets where each record of an append-log segment ends (its header record first), from the length prefixes. */
export function recordEnds(segment: Uint8Array): number[] {
  const view = new DataView(segment.buffer, segment.byteOffset, segment.byteLength);
  const ends: number[] = [];
  for (let at = 0; at < segment.length; ) {
    at += RECORD_HEADER_BYTES + view.getUint32(at);
    ends.push(at);
  }
  return ends;
}
