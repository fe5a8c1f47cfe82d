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
import { concatBytes, fromUtf8, utf8 } from '../bytes.js';
import { CorruptDataError } from '../errors.js';

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
export const KEY_VERSION = 0x01;

/** The counters kept per queue. */
export type StatsMetric = 'pending' | 'claimed' | 'done' | 'dead' | 'scheduled';
export const STATS_METRICS: readonly StatsMetric[] = ['pending', 'claimed', 'done', 'dead', 'scheduled'];

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

function u32(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n >>> 0);
  return out;
}

// Encoded queue names are reused by every key of every transition; a small cache saves the
// UTF-8 encoding and the allocation. Cleared when full (queue names are few in practice).
const lenQueueCache = new Map<string, Uint8Array>();

/** One-byte length followed by the name. Queue names are validated to at most 255 bytes. */
function lenQueue(queue: string): Uint8Array {
  let out = lenQueueCache.get(queue);
  if (out === undefined) {
    const q = utf8(queue);
    out = concatBytes(Uint8Array.of(q.length), q);
    if (lenQueueCache.size >= 1024) lenQueueCache.clear();
    lenQueueCache.set(queue, out);
  }
  return out;
}

// ---- record spaces ----

export function pendingQueuePrefix(queue: string): Uint8Array {
  return concatBytes(header(TAG.pending), lenQueue(queue));
}

export function pendingKey(queue: string, priority: number, id: string): Uint8Array {
  return concatBytes(pendingQueuePrefix(queue), u32(priority), utf8(id));
}

export function claimedQueuePrefix(queue: string): Uint8Array {
  return concatBytes(header(TAG.claimed), lenQueue(queue));
}

export function claimedKey(queue: string, id: string): Uint8Array {
  return concatBytes(claimedQueuePrefix(queue), utf8(id));
}

export function deadQueuePrefix(queue: string): Uint8Array {
  return concatBytes(header(TAG.dead), lenQueue(queue));
}

export function deadKey(queue: string, id: string): Uint8Array {
  return concatBytes(deadQueuePrefix(queue), utf8(id));
}

export function scheduledKey(runAt: number, queue: string, id: string): Uint8Array {
  return concatBytes(header(TAG.scheduled), u64(runAt), lenQueue(queue), utf8(id));
}

export function doneKey(completedAt: number, queue: string, id: string): Uint8Array {
  return concatBytes(header(TAG.done), u64(completedAt), lenQueue(queue), utf8(id));
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

export function jobIndexKey(id: string): Uint8Array {
  return concatBytes(header(TAG.jobIndex), utf8(id));
}

export function dedupKey(queue: string, key: string): Uint8Array {
  return concatBytes(header(TAG.dedup), lenQueue(queue), utf8(key));
}

/** Cursor records carry the queue name last, so no length byte. */
export function cursorKey(queue: string): Uint8Array {
  return concatBytes(header(TAG.cursor), utf8(queue));
}

export const CURSOR_PREFIX: Uint8Array = header(TAG.cursor);

export function statsQueuePrefix(queue: string): Uint8Array {
  return concatBytes(header(TAG.stats), lenQueue(queue));
}

export function statsKey(queue: string, metric: StatsMetric): Uint8Array {
  return concatBytes(statsQueuePrefix(queue), utf8(metric));
}

export const STATS_PREFIX: Uint8Array = header(TAG.stats);

export function historyKey(id: string): Uint8Array {
  return concatBytes(header(TAG.history), utf8(id));
}

export const HEARTBEAT_KEY: Uint8Array = header(TAG.heartbeat);

/** Caller KV keys: the raw caller bytes behind the user tag, no version byte. */
export function userKey(key: Uint8Array): Uint8Array {
  return concatBytes(Uint8Array.of(TAG.user), key);
}

export const USER_PREFIX: Uint8Array = Uint8Array.of(TAG.user);

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
