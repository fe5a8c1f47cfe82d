/**
 * The durable state of a batch, all in the caller KV under the reserved `workflow/bulk/` prefix
 * of the queue's store, so it commits in the same transactions as the items' queue jobs:
 *
 *   workflow/bulk/<batch>/meta              { v, n: item count, h: SHA-256 of the item list, at, fp }
 *   workflow/bulk/<batch>/items/<i:8>       { k: key, i: input bytes }   (the manifest)
 *   workflow/bulk/<batch>/done/<i:8>        marker { s: status, o?: output bytes, e?: error, c: phase costs }
 *   workflow/bulk/<batch>/log/<seq:10>      { i: item index }            (completion order)
 *   workflow/bulk/<batch>/stopped           { r: reason, f: failed, n: total }
 *   workflow/bulk/<batch>/ended             { at, c }  with batch retention (batch-retention.ts)
 *   workflow/bulk/<batch>/phases/<i:8>/<phase>  a finished phase (not the last) { v: value bytes, c: cost }, or { m: 1 }: in the step memo
 *
 * The manifest items are written before `meta`, so a `meta` means a complete manifest. A success
 * marker is staged with the item's acknowledgement and a failure marker with its dead-letter
 * (never with a retried attempt); the batch driver writes markers only for items that ended
 * without one (cancelled, dead-lettered outside the worker). The log is appended by the driver
 * alone, in group commits, and is what `results()` streams: an entry's sequence number is the
 * cursor.
 */
import { toHex, utf8 } from '../bytes.js';
import { sha256 } from '../hash.js';
import { decodeRecord, encodeRecord } from '../codec.js';
import { corrupt } from '../workflow/errors.js';
import { isPhaseCosts, type PhaseCosts } from './cost.js';

export type ItemStatus = 'succeeded' | 'failed' | 'cancelled';

export interface ItemMarker {
  readonly status: ItemStatus;
  readonly output?: Uint8Array;
  readonly error?: string;
  readonly cost: PhaseCosts;
}

export interface FailurePolicy {
  /** Stop once more than this many items failed. */
  readonly maxFailures?: number;
  /** Stop once failed / total exceeds this fraction (0..1). */
  readonly maxFailureFraction?: number;
}

export interface BatchMeta {
  readonly total: number;
  readonly itemsHash: Uint8Array;
  readonly createdAtMs: number;
  readonly policy: FailurePolicy;
  readonly headers: Readonly<Record<string, string>>;
}

export interface StopRecord {
  readonly reason: string;
  readonly failed: number;
  readonly total: number;
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');
const base = (batchId: string): string => `workflow/bulk/${batchId}/`;

export const batchPrefix = (batchId: string): Uint8Array => utf8(base(batchId));
export const metaKey = (batchId: string): Uint8Array => utf8(`${base(batchId)}meta`);
export const stoppedKey = (batchId: string): Uint8Array => utf8(`${base(batchId)}stopped`);
export const itemKey = (batchId: string, index: number): Uint8Array => utf8(`${base(batchId)}items/${pad(index, 8)}`);
export const markerKey = (batchId: string, index: number): Uint8Array => utf8(`${base(batchId)}done/${pad(index, 8)}`);
export const markerPrefix = (batchId: string): Uint8Array => utf8(`${base(batchId)}done/`);
export const logKey = (batchId: string, seq: number): Uint8Array => utf8(`${base(batchId)}log/${pad(seq, 10)}`);
export const logPrefix = (batchId: string): Uint8Array => utf8(`${base(batchId)}log/`);
export const phaseKey = (batchId: string, index: number, phase: string): Uint8Array => utf8(`${base(batchId)}phases/${pad(index, 8)}/${phase}`);

/** The item index at the end of a `done/` or `items/` key. */
export function indexOfKey(key: Uint8Array): number {
  let n = 0;
  for (let i = key.length - 8; i < key.length; i++) n = n * 10 + (key[i]! - 48);
  return n;
}

function decode(bytes: Uint8Array, what: string, batchId: string): Record<string, unknown> {
  try {
    const r = decodeRecord(bytes);
    if (typeof r === 'object' && r !== null && !Array.isArray(r)) return r as Record<string, unknown>;
  } catch (e) {
    throw corrupt(`bulk ${what} record does not decode. batchId=${batchId}`, { reason: 'undecodable_record', batchId }, e);
  }
  throw corrupt(`bulk ${what} record has an unknown shape. batchId=${batchId}`, { reason: 'undecodable_record', batchId });
}

export function encodeMarker(m: ItemMarker): Uint8Array {
  return encodeRecord({ s: m.status, o: m.output, e: m.error, c: m.cost });
}

export function decodeMarker(bytes: Uint8Array, batchId: string): ItemMarker {
  const r = decode(bytes, 'item marker', batchId);
  const s = r.s;
  if ((s === 'succeeded' || s === 'failed' || s === 'cancelled') && isPhaseCosts(r.c) && (r.o === undefined || r.o instanceof Uint8Array) && (r.e === undefined || typeof r.e === 'string')) {
    return { status: s, cost: r.c, ...(r.o === undefined ? {} : { output: r.o as Uint8Array }), ...(r.e === undefined ? {} : { error: r.e as string }) };
  }
  throw corrupt(`bulk item marker has an unknown shape. batchId=${batchId}`, { reason: 'undecodable_record', batchId });
}

export function encodeMeta(m: BatchMeta): Uint8Array {
  return encodeRecord({ v: 1, n: m.total, h: m.itemsHash, at: m.createdAtMs, fp: { c: m.policy.maxFailures, f: m.policy.maxFailureFraction }, hd: m.headers });
}

export function decodeMeta(bytes: Uint8Array, batchId: string): BatchMeta {
  const r = decode(bytes, 'batch meta', batchId);
  const fp = (r.fp ?? {}) as { c?: unknown; f?: unknown };
  if (r.v === 1 && typeof r.n === 'number' && r.h instanceof Uint8Array && typeof r.at === 'number' && typeof r.hd === 'object' && r.hd !== null) {
    const policy: FailurePolicy = {
      ...(typeof fp.c === 'number' ? { maxFailures: fp.c } : {}),
      ...(typeof fp.f === 'number' ? { maxFailureFraction: fp.f } : {}),
    };
    return { total: r.n, itemsHash: r.h, createdAtMs: r.at, policy, headers: r.hd as Record<string, string> };
  }
  throw corrupt(`bulk batch meta has an unknown shape. batchId=${batchId}`, { reason: 'undecodable_record', batchId });
}

export function encodeManifestItem(key: string, input: Uint8Array): Uint8Array {
  return encodeRecord({ k: key, i: input });
}

export function decodeManifestItem(bytes: Uint8Array, batchId: string): { key: string; input: Uint8Array } {
  const r = decode(bytes, 'manifest item', batchId);
  if (typeof r.k === 'string' && r.i instanceof Uint8Array) return { key: r.k, input: r.i };
  throw corrupt(`bulk manifest item has an unknown shape. batchId=${batchId}`, { reason: 'undecodable_record', batchId });
}

export function encodeLogEntry(index: number): Uint8Array {
  return encodeRecord({ i: index });
}

export function decodeLogEntry(bytes: Uint8Array, batchId: string): number {
  const r = decode(bytes, 'log entry', batchId);
  if (typeof r.i === 'number' && Number.isInteger(r.i) && r.i >= 0) return r.i;
  throw corrupt(`bulk log entry has an unknown shape. batchId=${batchId}`, { reason: 'undecodable_record', batchId });
}

export function encodeStop(s: StopRecord): Uint8Array {
  return encodeRecord({ r: s.reason, f: s.failed, n: s.total });
}

export function decodeStop(bytes: Uint8Array, batchId: string): StopRecord {
  const r = decode(bytes, 'stop', batchId);
  if (typeof r.r === 'string' && typeof r.f === 'number' && typeof r.n === 'number') return { reason: r.r, failed: r.f, total: r.n };
  throw corrupt(`bulk stop record has an unknown shape. batchId=${batchId}`, { reason: 'undecodable_record', batchId });
}

/** The item step's payload: which batch and item, and the encoded input. */
export function encodeItemPayload(batchId: string, index: number, key: string, input: Uint8Array): Uint8Array {
  return encodeRecord({ b: batchId, x: index, k: key, i: input });
}

export function decodeItemPayload(bytes: Uint8Array): { batchId: string; index: number; key: string; input: Uint8Array } | undefined {
  try {
    const r = decodeRecord(bytes) as Record<string, unknown> | null;
    if (typeof r === 'object' && r !== null && typeof r.b === 'string' && typeof r.x === 'number' && typeof r.k === 'string' && r.i instanceof Uint8Array) {
      return { batchId: r.b, index: r.x, key: r.k, input: r.i };
    }
  } catch {
    // not a payload of ours
  }
  return undefined;
}

/** The run id of an item: hex(SHA-256(batch + "/" + key)), so batches never share state. */
export async function itemRunId(batchId: string, key: string): Promise<string> {
  return toHex(await sha256(utf8(`${batchId}/${key}`)));
}
