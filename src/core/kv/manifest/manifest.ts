/**
 * The manifest: the one mutable object of an engine. It names the writer epoch, the first WAL
 * object still needed, the highest sequence number already in tables, and the sorted runs.
 * Every change is a compare-and-swap on its version, which is what makes writer fencing safe:
 * an older writer's next manifest update fails.
 *
 *   magic u32 | version u8 | MessagePack body | crc32c u32
 */
import { ByteWriter } from '../../bytes.js';
import { decodeRecord, encodeRecord } from '../../codec.js';
import { MANIFEST_MAGIC, FORMAT_VERSION, corruptReader, openChecksummed, sealWithChecksum } from '../format.js';
import { ByteReader } from '../../bytes.js';

/** One sorted table object. */
export interface SstMeta {
  readonly id: number;
  readonly size: number;
  readonly indexOffset: number;
  readonly indexLength: number;
  readonly filterOffset: number;
  readonly filterLength: number;
  readonly minKey: Uint8Array;
  readonly maxKey: Uint8Array;
  readonly count: number;
  readonly maxSeq: number;
}

/** Tables of one sorted run, in key order and non-overlapping. */
export type SortedRun = readonly SstMeta[];

export interface ManifestData {
  readonly epoch: number;
  /** The first WAL id whose commits are not all in tables yet. */
  readonly walStart: number;
  /** Every commit with seq <= lastSeq is in the runs. */
  readonly lastSeq: number;
  readonly nextSstId: number;
  /** Newest first: a key's newest version is in the first run that has it. */
  readonly runs: readonly SortedRun[];
}

export function emptyManifest(): ManifestData {
  return { epoch: 0, walStart: 1, lastSeq: 0, nextSstId: 1, runs: [] };
}

export function encodeManifest(m: ManifestData): Uint8Array {
  const w = new ByteWriter(256);
  w.u32(MANIFEST_MAGIC).u8(FORMAT_VERSION).bytes(encodeRecord(m));
  return sealWithChecksum(w);
}

export function decodeManifest(bytes: Uint8Array, object: string): ManifestData {
  const body = openChecksummed(bytes, object);
  const r = new ByteReader(body, corruptReader(object));
  if (r.u32() !== MANIFEST_MAGIC) throw corruptReader(object)('bad magic');
  const version = r.u8();
  if (version !== FORMAT_VERSION) throw corruptReader(object)(`unknown format version ${version}`);
  let m: unknown;
  try {
    m = decodeRecord(r.bytes(r.remaining));
  } catch (e) {
    throw corruptReader(object)(`undecodable body: ${(e as Error).message}`);
  }
  if (!isManifest(m)) throw corruptReader(object)('manifest fields missing');
  return m;
}

function isManifest(m: unknown): m is ManifestData {
  if (typeof m !== 'object' || m === null) return false;
  const o = m as Record<string, unknown>;
  return (
    typeof o.epoch === 'number' &&
    typeof o.walStart === 'number' &&
    typeof o.lastSeq === 'number' &&
    typeof o.nextSstId === 'number' &&
    Array.isArray(o.runs) &&
    o.runs.every((run) => Array.isArray(run) && run.every((t) => typeof t === 'object' && t !== null && (t as SstMeta).minKey instanceof Uint8Array))
  );
}
