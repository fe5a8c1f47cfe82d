/**
 * The manifest: the engine's state outside the WAL. It names the writer epoch, the first WAL
 * object still needed, the highest sequence number already in tables, the sorted runs and the
 * WAL fences that must outlive garbage collection. Each version is a new object in a create-only
 * sequence (see manifest-store.ts); nothing is ever overwritten.
 *
 *   magic u32 | version u8 | MessagePack body | crc32c u32
 */
import { ByteWriter } from '../../bytes.js';
import { decodeRecord, encodeRecord } from '../../codec.js';
import { MANIFEST_FORMAT_VERSION, MANIFEST_MAGIC, corruptReader, openFramed, sealWithChecksum } from '../format.js';

/** One sorted table object. */
export interface SstMeta {
  /** The table's name: its writer's epoch and a counter (see tableName). */
  readonly id: string;
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
  /**
   * A random id of the writer that claimed `epoch`, so two openers that build the same next
   * manifest still write different bytes and a lost create is never mistaken for one's own.
   */
  readonly writer: string;
  /** The first WAL id whose commits are not all in tables yet. */
  readonly walStart: number;
  /** Every commit with seq <= lastSeq is in the runs. */
  readonly lastSeq: number;
  /** Newest first: a key's newest version is in the first run that has it. */
  readonly runs: readonly SortedRun[];
  /**
   * The first WAL object of each writer epoch that has one, as [epoch, walId] pairs. These are
   * the fences that stop the writer before: garbage collection never deletes them (see
   * docs/rfcs/0001-kv-engine.md, "Open as writer").
   */
  readonly fences: readonly (readonly [epoch: number, walId: number])[];
  /**
   * The first log segment (`[epoch, segment]`) whose commits are not all in tables yet; absent
   * before any writer used append logs (docs/rfcs/0002-wal-append-log.md).
   */
  readonly logStart?: readonly [epoch: number, segment: number];
}

/** The state of a store that has never been written: what the first writer's open starts from. */
export function emptyManifest(): ManifestData {
  return { epoch: 0, writer: '', walStart: 1, lastSeq: 0, runs: [], fences: [] };
}

export function encodeManifest(m: ManifestData): Uint8Array {
  const w = new ByteWriter(256);
  w.u32(MANIFEST_MAGIC).u8(MANIFEST_FORMAT_VERSION).bytes(encodeRecord(m));
  return sealWithChecksum(w);
}

export function decodeManifest(bytes: Uint8Array, object: string): ManifestData {
  const r = openFramed(bytes, object, MANIFEST_MAGIC, MANIFEST_FORMAT_VERSION);
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
    typeof o.writer === 'string' &&
    typeof o.walStart === 'number' &&
    typeof o.lastSeq === 'number' &&
    Array.isArray(o.fences) &&
    o.fences.every((f) => Array.isArray(f) && f.length === 2 && typeof f[0] === 'number' && typeof f[1] === 'number') &&
    (o.logStart === undefined || (Array.isArray(o.logStart) && o.logStart.length === 2 && o.logStart.every((n) => typeof n === 'number'))) &&
    Array.isArray(o.runs) &&
    o.runs.every((run) => Array.isArray(run) && run.every((t) => typeof t === 'object' && t !== null && (t as SstMeta).minKey instanceof Uint8Array && typeof (t as SstMeta).id === 'string'))
  );
}
