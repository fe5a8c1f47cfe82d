/**
 * The queue's key layout: every internal key is `[tag][version][fields…]`, every caller KV key is
 * `[0xff][caller bytes]`. This file is the only place that knows the byte layout.
 *
 * Field encodings keep byte order equal to logical order: timestamps are u64 big-endian, priority
 * is u32 big-endian, a queue name is preceded by its one-byte length whenever more fields follow
 * (so queue "a" never prefixes queue "ab"), and the job id always comes last. The field a scan
 * orders by comes first: Scheduled and Done lead with time (one global scan with early exit),
 * Pending, Claimed and Dead lead with the queue (claims and listings cover one queue).
 */
import { concatBytes, fromUtf8, utf8 } from '../../bytes.js';
import { CorruptDataError } from '../../errors.js';

/** Key space tags. 0x00 is reserved as invalid. */
export const TAG = {
  pending: 0x01,
  claimed: 0x02,
  scheduled: 0x03,
  done: 0x04,
  dead: 0x05,
  jobIndex: 0x06,
  dedup: 0x07,
  cursor: 0x08,
  stats: 0x09,
  history: 0x0a,
  heartbeat: 0x0b,
  user: 0xff,
} as const;

/** Layout version byte written after the tag of every internal key (0x00 reserved). */
const KEY_VERSION = 0x01;

/** The counters kept per queue. */
export type StatsMetric = 'pending' | 'claimed' | 'done' | 'dead' | 'scheduled';
const STATS_METRICS: readonly StatsMetric[] = ['pending', 'claimed', 'done', 'dead', 'scheduled'];

/** Job states that own a key space holding the job record. */
export type RecordSpace = 'pending' | 'claimed' | 'scheduled' | 'done' | 'dead';

function header(tag: number): Uint8Array {
  return Uint8Array.of(tag, KEY_VERSION);
}

function u64(ms: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(Math.max(0, Math.floor(ms))));
  return out;
}

/** Writes `ms` as u64 big-endian at `o` (clamped to 0, floored), without a BigInt. */
function writeU64(out: Uint8Array, o: number, ms: number): void {
  const v = Math.max(0, Math.floor(ms));
  if (!(v <= Number.MAX_SAFE_INTEGER)) {
    // Huge or not a number: the BigInt path (which throws on NaN and infinities).
    out.set(u64(v), o);
    return;
  }
  const hi = Math.floor(v / 0x100000000);
  const lo = v - hi * 0x100000000;
  out[o] = hi >>> 24;
  out[o + 1] = (hi >>> 16) & 0xff;
  out[o + 2] = (hi >>> 8) & 0xff;
  out[o + 3] = hi & 0xff;
  out[o + 4] = lo >>> 24;
  out[o + 5] = (lo >>> 16) & 0xff;
  out[o + 6] = (lo >>> 8) & 0xff;
  out[o + 7] = lo & 0xff;
}

/** True when every character is ASCII, so its UTF-8 bytes are its char codes. */
function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return false;
  return true;
}

/**
 * `prefix` followed by the UTF-8 bytes of `text` (job ids: ASCII by validation or generation),
 * with `extra` zero bytes reserved between them for fixed-width fields; one allocation.
 */
function withText(prefix: Uint8Array, extra: number, text: string): Uint8Array {
  const at = prefix.length + extra;
  if (isAscii(text)) {
    const out = new Uint8Array(at + text.length);
    out.set(prefix);
    for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
    return out;
  }
  const bytes = utf8(text);
  const out = new Uint8Array(at + bytes.length);
  out.set(prefix);
  out.set(bytes, at);
  return out;
}

/** Byte encodings reused by every key of one queue. Treat every array as immutable. */
interface QueueKeyParts {
  /** One-byte length followed by the name. */
  readonly lenQueue: Uint8Array;
  readonly pending: Uint8Array;
  readonly claimed: Uint8Array;
  readonly dead: Uint8Array;
  readonly dedup: Uint8Array;
  readonly statsPrefix: Uint8Array;
  readonly stats: Readonly<Record<StatsMetric, Uint8Array>>;
}

// Encoded queue names are reused by every key of every transition; a small cache saves the
// UTF-8 encoding and the allocations. Cleared when full (queue names are few in practice).
const queueParts = new Map<string, QueueKeyParts>();

/** Queue names are validated to at most 255 bytes. */
function partsOf(queue: string): QueueKeyParts {
  let parts = queueParts.get(queue);
  if (parts === undefined) {
    const q = utf8(queue);
    const lenQueue = concatBytes(Uint8Array.of(q.length), q);
    const statsPrefix = concatBytes(header(TAG.stats), lenQueue);
    const stats = {} as Record<StatsMetric, Uint8Array>;
    for (const m of STATS_METRICS) stats[m] = concatBytes(statsPrefix, utf8(m));
    parts = {
      lenQueue,
      pending: concatBytes(header(TAG.pending), lenQueue),
      claimed: concatBytes(header(TAG.claimed), lenQueue),
      dead: concatBytes(header(TAG.dead), lenQueue),
      dedup: concatBytes(header(TAG.dedup), lenQueue),
      statsPrefix,
      stats,
    };
    if (queueParts.size >= 1024) queueParts.clear();
    queueParts.set(queue, parts);
  }
  return parts;
}

// Returned keys and prefixes may be shared between calls: callers (and the engine) never mutate
// key bytes. Functions that build a fresh key return a new array.

// ---- record spaces ----

export function pendingQueuePrefix(queue: string): Uint8Array {
  return partsOf(queue).pending;
}

export function pendingKey(queue: string, priority: number, id: string): Uint8Array {
  const prefix = partsOf(queue).pending;
  const out = withText(prefix, 4, id);
  const o = prefix.length;
  const p = priority >>> 0;
  out[o] = p >>> 24;
  out[o + 1] = (p >>> 16) & 0xff;
  out[o + 2] = (p >>> 8) & 0xff;
  out[o + 3] = p & 0xff;
  return out;
}

/** The priority field of a Pending key of `queue` (the u32 after the queue prefix). */
export function pendingKeyPriority(queue: string, key: Uint8Array): number {
  const o = partsOf(queue).pending.length;
  if (key.length < o + 4) throw corrupt('short pending key', key);
  return ((key[o] << 24) | (key[o + 1] << 16) | (key[o + 2] << 8) | key[o + 3]) >>> 0;
}

export function claimedQueuePrefix(queue: string): Uint8Array {
  return partsOf(queue).claimed;
}

export function claimedKey(queue: string, id: string): Uint8Array {
  return withText(partsOf(queue).claimed, 0, id);
}

export function deadQueuePrefix(queue: string): Uint8Array {
  return partsOf(queue).dead;
}

export function deadKey(queue: string, id: string): Uint8Array {
  return withText(partsOf(queue).dead, 0, id);
}

export function scheduledKey(runAt: number, queue: string, id: string): Uint8Array {
  return timeFirstKey(TAG.scheduled, runAt, queue, id);
}

export function doneKey(completedAt: number, queue: string, id: string): Uint8Array {
  return timeFirstKey(TAG.done, completedAt, queue, id);
}

function timeFirstKey(tag: number, ms: number, queue: string, id: string): Uint8Array {
  const lq = partsOf(queue).lenQueue;
  const prefix = new Uint8Array(10 + lq.length);
  prefix[0] = tag;
  prefix[1] = KEY_VERSION;
  writeU64(prefix, 2, ms);
  prefix.set(lq, 10);
  return withText(prefix, 0, id);
}

/** Prefix of a whole record space (every queue). */
export function spacePrefix(space: RecordSpace): Uint8Array {
  return header(TAG[space]);
}

/**
 * The first key of a time-first space (Scheduled or Done) whose timestamp is `ms`: scanning the
 * space up to (excluding) `timeBound(space, t + 1)` visits exactly the keys with time ≤ t.
 */
export function timeBound(space: 'scheduled' | 'done', ms: number): Uint8Array {
  return concatBytes(header(TAG[space]), u64(ms));
}

// ---- indexes and bookkeeping ----

const JOB_INDEX_HEADER = header(TAG.jobIndex);
const HISTORY_HEADER = header(TAG.history);

export function jobIndexKey(id: string): Uint8Array {
  return withText(JOB_INDEX_HEADER, 0, id);
}

export function dedupKey(queue: string, key: string): Uint8Array {
  return withText(partsOf(queue).dedup, 0, key);
}

/** Cursor records carry the queue name last, so no length byte. */
export function cursorKey(queue: string): Uint8Array {
  return concatBytes(header(TAG.cursor), utf8(queue));
}

export const CURSOR_PREFIX: Uint8Array = header(TAG.cursor);

export function statsQueuePrefix(queue: string): Uint8Array {
  return partsOf(queue).statsPrefix;
}

/** Shared per (queue, metric): do not mutate. */
export function statsKey(queue: string, metric: StatsMetric): Uint8Array {
  return partsOf(queue).stats[metric] ?? concatBytes(partsOf(queue).statsPrefix, utf8(metric));
}

export const STATS_PREFIX: Uint8Array = header(TAG.stats);

export function historyKey(id: string): Uint8Array {
  return withText(HISTORY_HEADER, 0, id);
}

export const HEARTBEAT_KEY: Uint8Array = header(TAG.heartbeat);

/** Caller KV keys: the raw caller bytes behind the user tag, no version byte. */
export function userKey(key: Uint8Array): Uint8Array {
  return concatBytes(Uint8Array.of(TAG.user), key);
}

// ---- parsing ----

function corrupt(what: string, key: Uint8Array): CorruptDataError {
  return new CorruptDataError(`malformed queue key. reason=${what}`, { reason: what, length: key.length });
}

function expectHeader(key: Uint8Array, tag: number): void {
  if (key.length < 2 || key[0] !== tag || key[1] !== KEY_VERSION) throw corrupt(`expected tag ${tag}`, key);
}

/** The timestamp leading a Scheduled or Done key. */
export function parseTimeKey(key: Uint8Array, space: 'scheduled' | 'done'): number {
  expectHeader(key, TAG[space]);
  if (key.length < 10) throw corrupt('short time key', key);
  return Number(new DataView(key.buffer, key.byteOffset + 2, 8).getBigUint64(0));
}

/** Queue and metric of a Stats key. */
export function parseStatsKey(key: Uint8Array): { queue: string; metric: string } {
  expectHeader(key, TAG.stats);
  const len = key[2];
  if (len === undefined || key.length < 3 + len) throw corrupt('short stats key', key);
  return { queue: fromUtf8(key.subarray(3, 3 + len)), metric: fromUtf8(key.subarray(3 + len)) };
}

/** The record space a key belongs to, or undefined for any other key. */
export function spaceOfKey(key: Uint8Array): RecordSpace | undefined {
  if (key.length < 2 || key[1] !== KEY_VERSION) return undefined;
  switch (key[0]) {
    case TAG.pending:
      return 'pending';
    case TAG.claimed:
      return 'claimed';
    case TAG.scheduled:
      return 'scheduled';
    case TAG.done:
      return 'done';
    case TAG.dead:
      return 'dead';
    default:
      return undefined;
  }
}

/** Strips the user tag from a caller KV key. */
export function callerKeyOf(stored: Uint8Array): Uint8Array {
  return stored.subarray(1);
}
