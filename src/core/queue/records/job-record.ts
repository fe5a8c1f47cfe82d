/**
 * The job record: what is stored under a job's space key and what inspection returns. Stored as a
 * MessagePack map with named fields; optional fields are omitted when empty, and an offloaded
 * record is stored without its payload bytes (`payloadRef` names the object instead).
 */
import { decodeRecord, encodeRecord } from '../../codec.js';
import { CorruptDataError } from '../../errors.js';
import { claimedKey, deadKey, doneKey, pendingKey, scheduledKey } from './keys.js';

export type JobStatus = 'pending' | 'scheduled' | 'claimed' | 'done' | 'dead';

/**
 * Why an inspected job's offloaded payload could not be read. Set only on records returned by
 * inspection (`getJob`, `listJobs`, `deadJobs`, on `Queue` and `QueueReader`); such a record has
 * an empty `payload` and every other field as stored, so one damaged object never fails a
 * listing. Claims never return such a job: they move it to Dead instead.
 */
export interface PayloadError {
  /**
   * `CORRUPT_DATA`: the object fails its checks (length, CRC-32C, magic, version).
   * `NOT_FOUND`: the object is gone. From a `QueueReader` this may be transient (the job was
   * removed and its object deleted after the reader's view): refresh and read again.
   */
  readonly code: 'CORRUPT_DATA' | 'NOT_FOUND';
  /** Object-store key of the payload object. */
  readonly object: string;
  /**
   * What is wrong, as in the dead-letter reason a claim writes: `payload object missing.
   * object=<key>` or `payload object corrupt. object=<key> problem=<what>`.
   */
  readonly message: string;
}

/** A job as stored and as returned by claims and inspection. Times are epoch ms from the queue clock. */
export interface JobRecord {
  /** Monotonic ULID, or the caller's override. */
  readonly id: string;
  readonly queue: string;
  /**
   * Always materialised on returned records, even when the bytes live in their own object;
   * empty (with `payloadError` set) on an inspected record whose payload object is unreadable.
   */
  readonly payload: Uint8Array;
  /** Name of the object holding an offloaded payload. Queue-managed. */
  readonly payloadRef?: string;
  /**
   * Only on inspected records whose offloaded payload object is missing or corrupt: why
   * `payload` is empty. Never stored. `requeueDeadJob` refuses such a job (CORRUPT_DATA) until the
   * object is restored; `deleteDeadJob` removes it.
   */
  readonly payloadError?: PayloadError;
  readonly headers: Readonly<Record<string, string>>;
  readonly status: JobStatus;
  /**
   * The number of the try in progress or last made, counting only tries that were not
   * interrupted: incremented by every claim, given back when the claim is interrupted (see
   * `interruptions`), reset to 0 by a dead requeue. A failure on a claim with `attempts >=
   * maxAttempts` dead-letters the job.
   */
  readonly attempts: number;
  readonly maxAttempts: number;
  /**
   * Deliveries lost without a settlement and not counted as failures: the process holding the
   * claim exited, crashed or closed the queue (found at the next open), or the queue abandoned a
   * claim it could not deliver. Reaching the queue's `maxInterruptions` dead-letters the job.
   * Reset to 0 by a dead requeue; read as 0 from records written before it existed.
   */
  readonly interruptions: number;
  /** Time of the first enqueue, kept across retries and requeues. */
  readonly enqueuedAt: number;
  /** Time of the most recent claim; cleared when the job goes back to pending or scheduled. */
  readonly claimedAt?: number;
  /** Only while scheduled: when the job becomes claimable. */
  readonly runAt?: number;
  /** Set by `wakeScheduled`. */
  readonly wokenAt?: number;
  /** Attached by `wakeScheduled` (never offloaded). */
  readonly wakePayload?: Uint8Array;
  /** Fixed for the job's life; lower is claimed first. */
  readonly priority: number;
  readonly lastError?: string;
  /** Present only while the job waits (pending or scheduled). */
  readonly dedupKey?: string;
  /** Only on kept done records. */
  readonly completedAt?: number;
  /** When the job entered the dead space; drives dead retention. */
  readonly failedAt?: number;
  /** Set by `cancel` on a claimed job; survives retries; cleared only by a dead requeue. */
  readonly cancelRequested: boolean;
}

/** A mutable copy, for building the next record of a transition. */
export type MutableJobRecord = { -readonly [K in keyof JobRecord]: JobRecord[K] };

const STORED_VERSION = 1;

/**
 * Serialises a record; the inline payload is left out when it is offloaded. The fast path writes
 * the MessagePack map directly, byte for byte what the generic encoder produces for the same
 * fields in the same order; records with a non-ASCII string take the generic encoder.
 */
export function encodeJobRecord(record: JobRecord): Uint8Array {
  return encodeFast(record) ?? encodeJobRecordGeneric(record);
}

/** @internal The generic-encoder form (the reference for the fast path). */
export function encodeJobRecordGeneric(record: JobRecord): Uint8Array {
  return encodeRecord({
    v: STORED_VERSION,
    id: record.id,
    queue: record.queue,
    payload: record.payloadRef === undefined ? record.payload : undefined,
    payloadRef: record.payloadRef,
    headers: Object.keys(record.headers).length > 0 ? record.headers : undefined,
    status: record.status,
    attempts: record.attempts,
    maxAttempts: record.maxAttempts,
    // Omitted when 0, so records that were never interrupted keep their earlier bytes.
    interruptions: record.interruptions > 0 ? record.interruptions : undefined,
    enqueuedAt: record.enqueuedAt,
    claimedAt: record.claimedAt,
    runAt: record.runAt,
    wokenAt: record.wokenAt,
    wakePayload: record.wakePayload,
    priority: record.priority,
    lastError: record.lastError,
    dedupKey: record.dedupKey,
    completedAt: record.completedAt,
    failedAt: record.failedAt,
    cancelRequested: record.cancelRequested ? true : undefined,
  });
}

// ---- fast MessagePack writer for records ----

/** Field names as MessagePack fixstr bytes. */
const FIELD_NAMES = [
  'v', 'id', 'queue', 'payload', 'payloadRef', 'headers', 'status', 'attempts', 'maxAttempts', 'interruptions', 'enqueuedAt',
  'claimedAt', 'runAt', 'wokenAt', 'wakePayload', 'priority', 'lastError', 'dedupKey', 'completedAt', 'failedAt', 'cancelRequested',
] as const;
type FieldName = (typeof FIELD_NAMES)[number];
const FIELD_BYTES = new Map<FieldName, Uint8Array>(FIELD_NAMES.map((f) => [f, Uint8Array.from([0xa0 + f.length, ...Array.from(f, (c) => c.charCodeAt(0))])]));
const F = (f: FieldName): Uint8Array => FIELD_BYTES.get(f)!;
const K_V = F('v'), K_ID = F('id'), K_QUEUE = F('queue'), K_PAYLOAD = F('payload'), K_PAYLOAD_REF = F('payloadRef');
const K_HEADERS = F('headers'), K_STATUS = F('status'), K_ATTEMPTS = F('attempts'), K_MAX_ATTEMPTS = F('maxAttempts');
const K_INTERRUPTIONS = F('interruptions');
const K_ENQUEUED_AT = F('enqueuedAt'), K_CLAIMED_AT = F('claimedAt'), K_RUN_AT = F('runAt'), K_WOKEN_AT = F('wokenAt');
const K_WAKE_PAYLOAD = F('wakePayload'), K_PRIORITY = F('priority'), K_LAST_ERROR = F('lastError'), K_DEDUP_KEY = F('dedupKey');
const K_COMPLETED_AT = F('completedAt'), K_FAILED_AT = F('failedAt'), K_CANCEL_REQUESTED = F('cancelRequested');

let wbuf = new Uint8Array(4096);
let wview = new DataView(wbuf.buffer);
let wpos = 0;

function ensure(extra: number): void {
  if (wpos + extra <= wbuf.length) return;
  let size = wbuf.length * 2;
  while (size < wpos + extra) size *= 2;
  const next = new Uint8Array(size);
  next.set(wbuf.subarray(0, wpos));
  wbuf = next;
  wview = new DataView(next.buffer);
}

function writeRaw(bytes: Uint8Array): void {
  ensure(bytes.length);
  if (bytes.length < 24) {
    for (let i = 0; i < bytes.length; i++) wbuf[wpos + i] = bytes[i];
  } else wbuf.set(bytes, wpos);
  wpos += bytes.length;
}

/** Writes an ASCII string; false (nothing usable written) when it has another character. */
function writeAscii(s: string): boolean {
  const n = s.length;
  ensure(n + 5);
  let o = wpos;
  if (n < 32) wbuf[o++] = 0xa0 + n;
  else if (n < 0x100) {
    wbuf[o++] = 0xd9;
    wbuf[o++] = n;
  } else if (n < 0x10000) {
    wbuf[o++] = 0xda;
    wbuf[o++] = n >>> 8;
    wbuf[o++] = n & 0xff;
  } else {
    wbuf[o++] = 0xdb;
    wview.setUint32(o, n);
    o += 4;
  }
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return false;
    wbuf[o++] = c;
  }
  wpos = o;
  return true;
}

function writeBin(b: Uint8Array): void {
  const n = b.length;
  ensure(n + 5);
  if (n < 0x100) {
    wbuf[wpos++] = 0xc4;
    wbuf[wpos++] = n;
  } else if (n < 0x10000) {
    wbuf[wpos++] = 0xc5;
    wbuf[wpos++] = n >>> 8;
    wbuf[wpos++] = n & 0xff;
  } else {
    wbuf[wpos++] = 0xc6;
    wview.setUint32(wpos, n);
    wpos += 4;
  }
  writeRaw(b);
}

/** The generic encoder's number forms: the smallest integer encoding, else float64. */
function writeNumber(v: number): void {
  ensure(9);
  if (Number.isSafeInteger(v)) {
    if (v >= 0) {
      if (v < 0x80) wbuf[wpos++] = v;
      else if (v < 0x100) {
        wbuf[wpos++] = 0xcc;
        wbuf[wpos++] = v;
      } else if (v < 0x10000) {
        wbuf[wpos++] = 0xcd;
        wbuf[wpos++] = v >>> 8;
        wbuf[wpos++] = v & 0xff;
      } else if (v < 0x100000000) {
        wbuf[wpos++] = 0xce;
        wview.setUint32(wpos, v);
        wpos += 4;
      } else {
        wbuf[wpos++] = 0xcf;
        const hi = Math.floor(v / 0x100000000);
        wview.setUint32(wpos, hi);
        wview.setUint32(wpos + 4, v - hi * 0x100000000);
        wpos += 8;
      }
      return;
    }
    if (v >= -0x20) wbuf[wpos++] = 0xe0 | (v + 0x20);
    else if (v >= -0x80) {
      wbuf[wpos++] = 0xd0;
      wview.setInt8(wpos++, v);
    } else if (v >= -0x8000) {
      wbuf[wpos++] = 0xd1;
      wview.setInt16(wpos, v);
      wpos += 2;
    } else if (v >= -0x80000000) {
      wbuf[wpos++] = 0xd2;
      wview.setInt32(wpos, v);
      wpos += 4;
    } else {
      wbuf[wpos++] = 0xd3;
      const hi = Math.floor(v / 0x100000000);
      wview.setInt32(wpos, hi);
      wview.setUint32(wpos + 4, v - hi * 0x100000000);
      wpos += 8;
    }
    return;
  }
  wbuf[wpos++] = 0xcb;
  wview.setFloat64(wpos, v);
  wpos += 8;
}

function encodeFast(r: JobRecord): Uint8Array | undefined {
  const inline = r.payloadRef === undefined;
  let headerCount = 0;
  for (const _ in r.headers) headerCount++;
  const count =
    7 + // v id queue status attempts maxAttempts enqueuedAt
    1 + // priority
    (inline ? (r.payload !== undefined ? 1 : 0) : 1) +
    (headerCount > 0 ? 1 : 0) +
    (r.interruptions > 0 ? 1 : 0) +
    (r.claimedAt !== undefined ? 1 : 0) +
    (r.runAt !== undefined ? 1 : 0) +
    (r.wokenAt !== undefined ? 1 : 0) +
    (r.wakePayload !== undefined ? 1 : 0) +
    (r.lastError !== undefined ? 1 : 0) +
    (r.dedupKey !== undefined ? 1 : 0) +
    (r.completedAt !== undefined ? 1 : 0) +
    (r.failedAt !== undefined ? 1 : 0) +
    (r.cancelRequested ? 1 : 0);
  wpos = 0;
  ensure(3);
  if (count < 16) wbuf[wpos++] = 0x80 + count;
  else {
    wbuf[wpos++] = 0xde;
    wbuf[wpos++] = count >>> 8;
    wbuf[wpos++] = count & 0xff;
  }
  writeRaw(K_V);
  writeNumber(STORED_VERSION);
  writeRaw(K_ID);
  if (!writeAscii(r.id)) return undefined;
  writeRaw(K_QUEUE);
  if (!writeAscii(r.queue)) return undefined;
  if (inline) {
    if (r.payload !== undefined) {
      if (!(r.payload instanceof Uint8Array)) return undefined;
      writeRaw(K_PAYLOAD);
      writeBin(r.payload);
    }
  } else {
    writeRaw(K_PAYLOAD_REF);
    if (!writeAscii(r.payloadRef!)) return undefined;
  }
  if (headerCount > 0) {
    if (headerCount >= 16) return undefined;
    writeRaw(K_HEADERS);
    ensure(1);
    wbuf[wpos++] = 0x80 + headerCount;
    for (const k in r.headers) {
      const v = r.headers[k];
      if (typeof v !== 'string' || !writeAscii(k) || !writeAscii(v)) return undefined;
    }
  }
  writeRaw(K_STATUS);
  if (!writeAscii(r.status)) return undefined;
  writeRaw(K_ATTEMPTS);
  writeNumber(r.attempts);
  writeRaw(K_MAX_ATTEMPTS);
  writeNumber(r.maxAttempts);
  if (r.interruptions > 0) {
    writeRaw(K_INTERRUPTIONS);
    writeNumber(r.interruptions);
  }
  writeRaw(K_ENQUEUED_AT);
  writeNumber(r.enqueuedAt);
  if (r.claimedAt !== undefined) {
    writeRaw(K_CLAIMED_AT);
    writeNumber(r.claimedAt);
  }
  if (r.runAt !== undefined) {
    writeRaw(K_RUN_AT);
    writeNumber(r.runAt);
  }
  if (r.wokenAt !== undefined) {
    writeRaw(K_WOKEN_AT);
    writeNumber(r.wokenAt);
  }
  if (r.wakePayload !== undefined) {
    if (!(r.wakePayload instanceof Uint8Array)) return undefined;
    writeRaw(K_WAKE_PAYLOAD);
    writeBin(r.wakePayload);
  }
  writeRaw(K_PRIORITY);
  writeNumber(r.priority);
  if (r.lastError !== undefined) {
    writeRaw(K_LAST_ERROR);
    if (!writeAscii(r.lastError)) return undefined;
  }
  if (r.dedupKey !== undefined) {
    writeRaw(K_DEDUP_KEY);
    if (!writeAscii(r.dedupKey)) return undefined;
  }
  if (r.completedAt !== undefined) {
    writeRaw(K_COMPLETED_AT);
    writeNumber(r.completedAt);
  }
  if (r.failedAt !== undefined) {
    writeRaw(K_FAILED_AT);
    writeNumber(r.failedAt);
  }
  if (r.cancelRequested) {
    writeRaw(K_CANCEL_REQUESTED);
    ensure(1);
    wbuf[wpos++] = 0xc3;
  }
  return wbuf.slice(0, wpos);
}

const STATUSES = new Set<string>(['pending', 'scheduled', 'claimed', 'done', 'dead']);

function fail(reason: string, field?: string): never {
  throw new CorruptDataError(`undecodable job record. reason=${reason}${field ? ` field=${field}` : ''}`, { reason, field });
}

/**
 * Parses a stored record. An offloaded record comes back with an empty `payload`; callers
 * materialise it through the payload store. Throws CORRUPT_DATA on any shape error.
 */
export function decodeJobRecord(bytes: Uint8Array): JobRecord {
  return decodeFast(bytes) ?? decodeJobRecordGeneric(bytes);
}

/** @internal The generic-decoder form (the reference for the fast path; it also names every error). */
export function decodeJobRecordGeneric(bytes: Uint8Array): JobRecord {
  let raw: unknown;
  try {
    raw = decodeRecord(bytes);
  } catch (e) {
    throw new CorruptDataError('undecodable job record. reason=msgpack', { reason: 'msgpack' }, e);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('not a map');
  const r = raw as Record<string, unknown>;
  if (r.v !== STORED_VERSION) fail('unknown version', 'v');
  const str = (f: string, optional: boolean): string | undefined => {
    const v = r[f];
    if (v === undefined || v === null) return optional ? undefined : fail('missing', f);
    if (typeof v !== 'string') fail('not a string', f);
    return v;
  };
  const num = (f: string, optional: boolean): number | undefined => {
    const v = r[f];
    if (v === undefined || v === null) return optional ? undefined : fail('missing', f);
    if (typeof v !== 'number') fail('not a number', f);
    return v;
  };
  const bin = (f: string): Uint8Array | undefined => {
    const v = r[f];
    if (v === undefined || v === null) return undefined;
    if (!(v instanceof Uint8Array)) fail('not bytes', f);
    return v;
  };
  const status = str('status', false)!;
  if (!STATUSES.has(status)) fail('unknown status', 'status');
  const headers = r.headers ?? {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) fail('not a map', 'headers');
  for (const v of Object.values(headers)) if (typeof v !== 'string') fail('not a string', 'headers');
  const payloadRef = str('payloadRef', true);
  const record: MutableJobRecord = {
    id: str('id', false)!,
    queue: str('queue', false)!,
    payload: bin('payload') ?? new Uint8Array(0),
    headers: headers as Record<string, string>,
    status: status as JobStatus,
    attempts: num('attempts', false)!,
    maxAttempts: num('maxAttempts', false)!,
    interruptions: num('interruptions', true) ?? 0,
    enqueuedAt: num('enqueuedAt', false)!,
    priority: num('priority', false)!,
    cancelRequested: r.cancelRequested === true,
  };
  if (payloadRef !== undefined) record.payloadRef = payloadRef;
  const optionalNumbers = ['claimedAt', 'runAt', 'wokenAt', 'completedAt', 'failedAt'] as const;
  for (const f of optionalNumbers) {
    const v = num(f, true);
    if (v !== undefined) record[f] = v;
  }
  const wake = bin('wakePayload');
  if (wake !== undefined) record.wakePayload = wake;
  const lastError = str('lastError', true);
  if (lastError !== undefined) record.lastError = lastError;
  const dedup = str('dedupKey', true);
  if (dedup !== undefined) record.dedupKey = dedup;
  return record;
}

// ---- fast MessagePack reader for records ----

/** Thrown inside the fast reader to give up; the generic decoder then decides. */
const BAIL = Symbol('bail');

let rbuf: Uint8Array = new Uint8Array(0);
let rpos = 0;

function need(n: number): void {
  if (rpos + n > rbuf.length) throw BAIL;
}

function u16(): number {
  need(2);
  const v = (rbuf[rpos] << 8) | rbuf[rpos + 1];
  rpos += 2;
  return v;
}

function u32(): number {
  need(4);
  const v = rbuf[rpos] * 0x1000000 + ((rbuf[rpos + 1] << 16) | (rbuf[rpos + 2] << 8) | rbuf[rpos + 3]);
  rpos += 4;
  return v;
}

/** An ASCII string of `n` bytes at the cursor (non-ASCII ⇒ bail). */
function asciiAt(n: number): string {
  need(n);
  const start = rpos;
  const end = start + n;
  for (let i = start; i < end; i++) if (rbuf[i] >= 0x80) throw BAIL;
  rpos = end;
  if (n === 0) return '';
  return String.fromCharCode.apply(null, rbuf.subarray(start, end) as unknown as number[]);
}

/** A string value, or undefined for nil. */
function readStr(): string | undefined {
  need(1);
  const h = rbuf[rpos++];
  if (h >= 0xa0 && h <= 0xbf) return asciiAt(h - 0xa0);
  if (h === 0xd9) {
    need(1);
    return asciiAt(rbuf[rpos++]);
  }
  if (h === 0xda) return asciiAt(u16());
  if (h === 0xdb) return asciiAt(u32());
  if (h === 0xc0) return undefined;
  throw BAIL;
}

/** A bin value (a view, as the generic decoder returns), or undefined for nil. */
function readBin(): Uint8Array | undefined {
  need(1);
  const h = rbuf[rpos++];
  let n: number;
  if (h === 0xc4) {
    need(1);
    n = rbuf[rpos++];
  } else if (h === 0xc5) n = u16();
  else if (h === 0xc6) n = u32();
  else if (h === 0xc0) return undefined;
  else throw BAIL;
  need(n);
  const out = rbuf.subarray(rpos, rpos + n);
  rpos += n;
  return out;
}

let rview: DataView | undefined;
let rviewOf: Uint8Array | undefined;

function view(): DataView {
  if (rviewOf !== rbuf) {
    rview = new DataView(rbuf.buffer, rbuf.byteOffset, rbuf.byteLength);
    rviewOf = rbuf;
  }
  return rview!;
}

/** A number value, or undefined for nil. */
function readNum(): number | undefined {
  need(1);
  const h = rbuf[rpos++];
  if (h < 0x80) return h;
  if (h >= 0xe0) return h - 0x100;
  switch (h) {
    case 0xcc:
      need(1);
      return rbuf[rpos++];
    case 0xcd:
      return u16();
    case 0xce:
      return u32();
    case 0xcf: {
      const hi = u32();
      return hi * 0x100000000 + u32();
    }
    case 0xd0: {
      need(1);
      const v = rbuf[rpos++];
      return v >= 0x80 ? v - 0x100 : v;
    }
    case 0xd1: {
      const v = u16();
      return v >= 0x8000 ? v - 0x10000 : v;
    }
    case 0xd2: {
      need(4);
      const v = view().getInt32(rpos);
      rpos += 4;
      return v;
    }
    case 0xd3: {
      need(8);
      const hi = view().getInt32(rpos);
      rpos += 4;
      return hi * 0x100000000 + u32();
    }
    case 0xca: {
      need(4);
      const v = view().getFloat32(rpos);
      rpos += 4;
      return v;
    }
    case 0xcb: {
      need(8);
      const v = view().getFloat64(rpos);
      rpos += 8;
      return v;
    }
    case 0xc0:
      return undefined;
    default:
      throw BAIL;
  }
}

function mapHeader(): number {
  need(1);
  const h = rbuf[rpos++];
  if (h >= 0x80 && h <= 0x8f) return h - 0x80;
  if (h === 0xde) return u16();
  throw BAIL;
}

/** True when the fixstr key at the cursor equals `name` (its bytes after the header). */
function keyIs(name: Uint8Array, start: number, n: number): boolean {
  if (name.length !== n + 1) return false;
  for (let i = 0; i < n; i++) if (rbuf[start + i] !== name[i + 1]) return false;
  return true;
}

function decodeFast(bytes: Uint8Array): JobRecord | undefined {
  rbuf = bytes;
  rpos = 0;
  try {
    return decodeFastInner();
  } catch (e) {
    if (e === BAIL) return undefined;
    throw e;
  } finally {
    rbuf = EMPTY;
    rviewOf = undefined;
    rview = undefined;
  }
}

const EMPTY = new Uint8Array(0);

function decodeFastInner(): JobRecord | undefined {
  let v: number | undefined;
  let id: string | undefined;
  let queue: string | undefined;
  let payload: Uint8Array | undefined;
  let payloadRef: string | undefined;
  let headers: Record<string, string> | undefined;
  let status: string | undefined;
  let attempts: number | undefined;
  let maxAttempts: number | undefined;
  let interruptions: number | undefined;
  let enqueuedAt: number | undefined;
  let claimedAt: number | undefined;
  let runAt: number | undefined;
  let wokenAt: number | undefined;
  let wakePayload: Uint8Array | undefined;
  let priority: number | undefined;
  let lastError: string | undefined;
  let dedup: string | undefined;
  let completedAt: number | undefined;
  let failedAt: number | undefined;
  let cancelRequested = false;
  const count = mapHeader();
  for (let i = 0; i < count; i++) {
    need(1);
    const kh = rbuf[rpos];
    if (kh < 0xa0 || kh > 0xbf) throw BAIL;
    const n = kh - 0xa0;
    const start = rpos + 1;
    need(n + 1);
    rpos = start + n;
    // Dispatch on the key's length and first letter, then check every byte.
    const c0 = n > 0 ? rbuf[start] : 0;
    if (n === 1 && keyIs(K_V, start, n)) v = readNum();
    else if (n === 2 && keyIs(K_ID, start, n)) id = readStr();
    else if (n === 5 && c0 === 0x71 /* q */ && keyIs(K_QUEUE, start, n)) queue = readStr();
    else if (n === 7 && c0 === 0x70 /* p */ && keyIs(K_PAYLOAD, start, n)) payload = readBin();
    else if (n === 10 && c0 === 0x70 && keyIs(K_PAYLOAD_REF, start, n)) payloadRef = readStr();
    else if (n === 7 && c0 === 0x68 /* h */ && keyIs(K_HEADERS, start, n)) {
      need(1);
      if (rbuf[rpos] === 0xc0) {
        rpos++;
        headers = undefined;
      } else {
        const m = mapHeader();
        const out: Record<string, string> = {};
        for (let j = 0; j < m; j++) {
          const k = readStr();
          const hv = readStr();
          if (k === undefined || hv === undefined || k === '__proto__') throw BAIL;
          out[k] = hv;
        }
        headers = out;
      }
    } else if (n === 6 && c0 === 0x73 /* s */ && keyIs(K_STATUS, start, n)) status = readStr();
    else if (n === 8 && c0 === 0x61 /* a */ && keyIs(K_ATTEMPTS, start, n)) attempts = readNum();
    else if (n === 11 && c0 === 0x6d /* m */ && keyIs(K_MAX_ATTEMPTS, start, n)) maxAttempts = readNum();
    else if (n === 13 && c0 === 0x69 /* i */ && keyIs(K_INTERRUPTIONS, start, n)) interruptions = readNum();
    else if (n === 10 && c0 === 0x65 /* e */ && keyIs(K_ENQUEUED_AT, start, n)) enqueuedAt = readNum();
    else if (n === 9 && c0 === 0x63 /* c */ && keyIs(K_CLAIMED_AT, start, n)) claimedAt = readNum();
    else if (n === 5 && c0 === 0x72 /* r */ && keyIs(K_RUN_AT, start, n)) runAt = readNum();
    else if (n === 7 && c0 === 0x77 /* w */ && keyIs(K_WOKEN_AT, start, n)) wokenAt = readNum();
    else if (n === 11 && c0 === 0x77 && keyIs(K_WAKE_PAYLOAD, start, n)) wakePayload = readBin();
    else if (n === 8 && c0 === 0x70 && keyIs(K_PRIORITY, start, n)) priority = readNum();
    else if (n === 9 && c0 === 0x6c /* l */ && keyIs(K_LAST_ERROR, start, n)) lastError = readStr();
    else if (n === 8 && c0 === 0x64 /* d */ && keyIs(K_DEDUP_KEY, start, n)) dedup = readStr();
    else if (n === 11 && c0 === 0x63 && keyIs(K_COMPLETED_AT, start, n)) completedAt = readNum();
    else if (n === 8 && c0 === 0x66 /* f */ && keyIs(K_FAILED_AT, start, n)) failedAt = readNum();
    else if (n === 15 && c0 === 0x63 && keyIs(K_CANCEL_REQUESTED, start, n)) {
      need(1);
      const b = rbuf[rpos++];
      if (b === 0xc3) cancelRequested = true;
      else if (b === 0xc2 || b === 0xc0) cancelRequested = false;
      else throw BAIL;
    } else throw BAIL;
  }
  if (rpos !== rbuf.length) throw BAIL;
  if (v !== STORED_VERSION || id === undefined || queue === undefined || status === undefined || !STATUSES.has(status)) throw BAIL;
  if (attempts === undefined || maxAttempts === undefined || enqueuedAt === undefined || priority === undefined) throw BAIL;
  // The same object shape, in the same property order, as the generic path builds.
  const record: MutableJobRecord = {
    id,
    queue,
    payload: payload ?? new Uint8Array(0),
    headers: headers ?? {},
    status: status as JobStatus,
    attempts,
    maxAttempts,
    interruptions: interruptions ?? 0,
    enqueuedAt,
    priority,
    cancelRequested,
  };
  if (payloadRef !== undefined) record.payloadRef = payloadRef;
  if (claimedAt !== undefined) record.claimedAt = claimedAt;
  if (runAt !== undefined) record.runAt = runAt;
  if (wokenAt !== undefined) record.wokenAt = wokenAt;
  if (completedAt !== undefined) record.completedAt = completedAt;
  if (failedAt !== undefined) record.failedAt = failedAt;
  if (wakePayload !== undefined) record.wakePayload = wakePayload;
  if (lastError !== undefined) record.lastError = lastError;
  if (dedup !== undefined) record.dedupKey = dedup;
  return record;
}

/** The key of the space that holds `record` in its current status. */
export function recordKey(record: JobRecord): Uint8Array {
  switch (record.status) {
    case 'pending':
      return pendingKey(record.queue, record.priority, record.id);
    case 'claimed':
      return claimedKey(record.queue, record.id);
    case 'scheduled':
      return scheduledKey(record.runAt ?? 0, record.queue, record.id);
    case 'done':
      return doneKey(record.completedAt ?? 0, record.queue, record.id);
    case 'dead':
      return deadKey(record.queue, record.id);
  }
}

/** A copy of `record` with some fields changed and some removed. */
export function withChanges(record: JobRecord, changes: Partial<MutableJobRecord>, remove: readonly (keyof JobRecord)[] = []): JobRecord {
  const next: MutableJobRecord = { ...record, ...changes };
  for (const f of remove) delete (next as Partial<MutableJobRecord>)[f];
  return next;
}
