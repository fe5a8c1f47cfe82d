/**
 * The stored form of a job record: a MessagePack map with named fields, optional fields omitted
 * when empty, and an offloaded record stored without its payload bytes (`payloadRef` names the
 * object instead).
 *
 * Two paths produce and read the same bytes: the generic codec (`core/codec.ts`, the reference)
 * and a fast path written for the record's shape. The fast path gives up on anything unusual (a
 * non-ASCII string, sixteen or more headers, an unknown key) and the generic path then decides.
 * Every call works on its own writer or reader; the module holds no state between calls.
 */
import { decodeRecord, encodeRecord } from '../../codec.js';
import { CorruptDataError } from '../../errors.js';
import type { JobRecord, JobStatus, MutableJobRecord } from './job-record.js';

const STORED_VERSION = 1;

const STATUSES: ReadonlySet<string> = new Set<JobStatus>(['pending', 'scheduled', 'claimed', 'done', 'dead']);

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

/**
 * Parses a stored record. An offloaded record comes back with an empty `payload`; callers
 * materialise it through the payload store. Throws CORRUPT_DATA on any shape error.
 */
export function decodeJobRecord(bytes: Uint8Array): JobRecord {
  return decodeFast(bytes) ?? decodeJobRecordGeneric(bytes);
}

function fail(reason: string, field?: string): never {
  throw new CorruptDataError(`undecodable job record. reason=${reason}${field ? ` field=${field}` : ''}`, { reason, field });
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

// ---- field names ----

/** A field name as MessagePack fixstr bytes (header byte, then the ASCII name). */
function fieldKey(name: keyof JobRecord | 'v'): Uint8Array {
  return Uint8Array.from([0xa0 + name.length, ...Array.from(name, (c) => c.charCodeAt(0))]);
}

const K_V = fieldKey('v'), K_ID = fieldKey('id'), K_QUEUE = fieldKey('queue'), K_PAYLOAD = fieldKey('payload');
const K_PAYLOAD_REF = fieldKey('payloadRef'), K_HEADERS = fieldKey('headers'), K_STATUS = fieldKey('status');
const K_ATTEMPTS = fieldKey('attempts'), K_MAX_ATTEMPTS = fieldKey('maxAttempts'), K_INTERRUPTIONS = fieldKey('interruptions');
const K_ENQUEUED_AT = fieldKey('enqueuedAt'), K_CLAIMED_AT = fieldKey('claimedAt'), K_RUN_AT = fieldKey('runAt');
const K_WOKEN_AT = fieldKey('wokenAt'), K_WAKE_PAYLOAD = fieldKey('wakePayload'), K_PRIORITY = fieldKey('priority');
const K_LAST_ERROR = fieldKey('lastError'), K_DEDUP_KEY = fieldKey('dedupKey'), K_COMPLETED_AT = fieldKey('completedAt');
const K_FAILED_AT = fieldKey('failedAt'), K_CANCEL_REQUESTED = fieldKey('cancelRequested');

// ---- fast MessagePack writer for records ----

/** Bytes of a string of `n` ASCII characters, header included. */
function strSize(n: number): number {
  return n < 32 ? 1 + n : n < 0x100 ? 2 + n : n < 0x10000 ? 3 + n : 5 + n;
}

/** Bytes of a bin of `n` bytes, header included. */
function binSize(n: number): number {
  return n < 0x100 ? 2 + n : n < 0x10000 ? 3 + n : 5 + n;
}

/** Bytes `RecordWriter.number` writes for `v`. */
function numSize(v: number): number {
  if (!Number.isSafeInteger(v)) return 9;
  if (v >= 0) return v < 0x80 ? 1 : v < 0x100 ? 2 : v < 0x10000 ? 3 : v < 0x100000000 ? 5 : 9;
  return v >= -0x20 ? 1 : v >= -0x80 ? 2 : v >= -0x8000 ? 3 : v >= -0x80000000 ? 5 : 9;
}

/** Writes one record into a buffer of its own (big-endian, as MessagePack). */
class RecordWriter {
  private buf: Uint8Array;
  private view: DataView | undefined;
  private pos = 0;

  constructor(capacity: number) {
    this.buf = new Uint8Array(capacity);
  }

  /** The bytes written, in a buffer of their exact length. */
  finish(): Uint8Array {
    return this.pos === this.buf.length ? this.buf : this.buf.slice(0, this.pos);
  }

  private ensure(extra: number): void {
    const needed = this.pos + extra;
    if (needed <= this.buf.length) return;
    let size = Math.max(this.buf.length * 2, 64);
    while (size < needed) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = undefined;
  }

  private u16At(o: number, v: number): void {
    this.buf[o] = v >>> 8;
    this.buf[o + 1] = v & 0xff;
  }

  /** Four bytes of `v` taken as a 32-bit two's-complement or unsigned integer. */
  private u32At(o: number, v: number): void {
    const b = this.buf;
    b[o] = v >>> 24;
    b[o + 1] = (v >>> 16) & 0xff;
    b[o + 2] = (v >>> 8) & 0xff;
    b[o + 3] = v & 0xff;
  }

  mapHeader(count: number): void {
    this.ensure(3);
    if (count < 16) this.buf[this.pos++] = 0x80 + count;
    else {
      this.buf[this.pos] = 0xde;
      this.u16At(this.pos + 1, count);
      this.pos += 3;
    }
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    const b = this.buf;
    const o = this.pos;
    if (bytes.length < 24) {
      for (let i = 0; i < bytes.length; i++) b[o + i] = bytes[i];
    } else b.set(bytes, o);
    this.pos = o + bytes.length;
  }

  /** Writes an ASCII string; false (nothing usable written) when it has another character. */
  ascii(s: string): boolean {
    const n = s.length;
    this.ensure(strSize(n));
    const b = this.buf;
    let o = this.pos;
    if (n < 32) b[o++] = 0xa0 + n;
    else if (n < 0x100) {
      b[o++] = 0xd9;
      b[o++] = n;
    } else if (n < 0x10000) {
      b[o++] = 0xda;
      this.u16At(o, n);
      o += 2;
    } else {
      b[o++] = 0xdb;
      this.u32At(o, n);
      o += 4;
    }
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return false;
      b[o++] = c;
    }
    this.pos = o;
    return true;
  }

  bin(bytes: Uint8Array): void {
    const n = bytes.length;
    this.ensure(binSize(n));
    const b = this.buf;
    if (n < 0x100) {
      b[this.pos++] = 0xc4;
      b[this.pos++] = n;
    } else if (n < 0x10000) {
      b[this.pos] = 0xc5;
      this.u16At(this.pos + 1, n);
      this.pos += 3;
    } else {
      b[this.pos] = 0xc6;
      this.u32At(this.pos + 1, n);
      this.pos += 5;
    }
    this.raw(bytes);
  }

  /** The generic encoder's number forms: the smallest integer encoding, else float64. */
  number(v: number): void {
    this.ensure(numSize(v));
    const b = this.buf;
    const o = this.pos;
    if (Number.isSafeInteger(v)) {
      if (v >= 0) {
        if (v < 0x80) {
          b[o] = v;
          this.pos = o + 1;
        } else if (v < 0x100) {
          b[o] = 0xcc;
          b[o + 1] = v;
          this.pos = o + 2;
        } else if (v < 0x10000) {
          b[o] = 0xcd;
          this.u16At(o + 1, v);
          this.pos = o + 3;
        } else if (v < 0x100000000) {
          b[o] = 0xce;
          this.u32At(o + 1, v);
          this.pos = o + 5;
        } else {
          b[o] = 0xcf;
          const hi = Math.floor(v / 0x100000000);
          this.u32At(o + 1, hi);
          this.u32At(o + 5, v - hi * 0x100000000);
          this.pos = o + 9;
        }
        return;
      }
      if (v >= -0x20) {
        b[o] = 0xe0 | (v + 0x20);
        this.pos = o + 1;
      } else if (v >= -0x80) {
        b[o] = 0xd0;
        b[o + 1] = v & 0xff;
        this.pos = o + 2;
      } else if (v >= -0x8000) {
        b[o] = 0xd1;
        this.u16At(o + 1, v & 0xffff);
        this.pos = o + 3;
      } else if (v >= -0x80000000) {
        b[o] = 0xd2;
        this.u32At(o + 1, v);
        this.pos = o + 5;
      } else {
        b[o] = 0xd3;
        const hi = Math.floor(v / 0x100000000);
        this.u32At(o + 1, hi);
        this.u32At(o + 5, v - hi * 0x100000000);
        this.pos = o + 9;
      }
      return;
    }
    b[o] = 0xcb;
    this.view ??= new DataView(b.buffer, b.byteOffset, b.byteLength);
    this.view.setFloat64(o + 1, v);
    this.pos = o + 9;
  }
}

function encodeFast(r: JobRecord): Uint8Array | undefined {
  // Count the fields and the exact size first, so the record is written into a buffer of its
  // own length (one allocation; the writer still grows should the sum fall short).
  const inline = r.payloadRef === undefined;
  let count = 8; // v id queue status attempts maxAttempts enqueuedAt priority
  let size =
    K_V.length + 1 +
    K_ID.length + strSize(r.id.length) +
    K_QUEUE.length + strSize(r.queue.length) +
    K_STATUS.length + strSize(r.status.length) +
    K_ATTEMPTS.length + numSize(r.attempts) +
    K_MAX_ATTEMPTS.length + numSize(r.maxAttempts) +
    K_ENQUEUED_AT.length + numSize(r.enqueuedAt) +
    K_PRIORITY.length + numSize(r.priority);
  if (inline) {
    if (r.payload !== undefined) {
      if (!(r.payload instanceof Uint8Array)) return undefined;
      count++;
      size += K_PAYLOAD.length + binSize(r.payload.length);
    }
  } else {
    count++;
    size += K_PAYLOAD_REF.length + strSize(r.payloadRef!.length);
  }
  let headerCount = 0;
  for (const k in r.headers) {
    const v = r.headers[k];
    if (typeof v !== 'string') return undefined;
    headerCount++;
    size += strSize(k.length) + strSize(v.length);
  }
  if (headerCount > 0) {
    if (headerCount >= 16) return undefined;
    count++;
    size += K_HEADERS.length + 1;
  }
  if (r.interruptions > 0) {
    count++;
    size += K_INTERRUPTIONS.length + numSize(r.interruptions);
  }
  if (r.claimedAt !== undefined) {
    count++;
    size += K_CLAIMED_AT.length + numSize(r.claimedAt);
  }
  if (r.runAt !== undefined) {
    count++;
    size += K_RUN_AT.length + numSize(r.runAt);
  }
  if (r.wokenAt !== undefined) {
    count++;
    size += K_WOKEN_AT.length + numSize(r.wokenAt);
  }
  if (r.wakePayload !== undefined) {
    if (!(r.wakePayload instanceof Uint8Array)) return undefined;
    count++;
    size += K_WAKE_PAYLOAD.length + binSize(r.wakePayload.length);
  }
  if (r.lastError !== undefined) {
    count++;
    size += K_LAST_ERROR.length + strSize(r.lastError.length);
  }
  if (r.dedupKey !== undefined) {
    count++;
    size += K_DEDUP_KEY.length + strSize(r.dedupKey.length);
  }
  if (r.completedAt !== undefined) {
    count++;
    size += K_COMPLETED_AT.length + numSize(r.completedAt);
  }
  if (r.failedAt !== undefined) {
    count++;
    size += K_FAILED_AT.length + numSize(r.failedAt);
  }
  if (r.cancelRequested) {
    count++;
    size += K_CANCEL_REQUESTED.length + 1;
  }
  const w = new RecordWriter(size + (count < 16 ? 1 : 3));
  w.mapHeader(count);
  w.raw(K_V);
  w.number(STORED_VERSION);
  w.raw(K_ID);
  if (!w.ascii(r.id)) return undefined;
  w.raw(K_QUEUE);
  if (!w.ascii(r.queue)) return undefined;
  if (inline) {
    if (r.payload !== undefined) {
      w.raw(K_PAYLOAD);
      w.bin(r.payload);
    }
  } else {
    w.raw(K_PAYLOAD_REF);
    if (!w.ascii(r.payloadRef!)) return undefined;
  }
  if (headerCount > 0) {
    w.raw(K_HEADERS);
    w.mapHeader(headerCount);
    for (const k in r.headers) if (!w.ascii(k) || !w.ascii(r.headers[k])) return undefined;
  }
  w.raw(K_STATUS);
  if (!w.ascii(r.status)) return undefined;
  w.raw(K_ATTEMPTS);
  w.number(r.attempts);
  w.raw(K_MAX_ATTEMPTS);
  w.number(r.maxAttempts);
  if (r.interruptions > 0) {
    w.raw(K_INTERRUPTIONS);
    w.number(r.interruptions);
  }
  w.raw(K_ENQUEUED_AT);
  w.number(r.enqueuedAt);
  if (r.claimedAt !== undefined) {
    w.raw(K_CLAIMED_AT);
    w.number(r.claimedAt);
  }
  if (r.runAt !== undefined) {
    w.raw(K_RUN_AT);
    w.number(r.runAt);
  }
  if (r.wokenAt !== undefined) {
    w.raw(K_WOKEN_AT);
    w.number(r.wokenAt);
  }
  if (r.wakePayload !== undefined) {
    w.raw(K_WAKE_PAYLOAD);
    w.bin(r.wakePayload);
  }
  w.raw(K_PRIORITY);
  w.number(r.priority);
  if (r.lastError !== undefined) {
    w.raw(K_LAST_ERROR);
    if (!w.ascii(r.lastError)) return undefined;
  }
  if (r.dedupKey !== undefined) {
    w.raw(K_DEDUP_KEY);
    if (!w.ascii(r.dedupKey)) return undefined;
  }
  if (r.completedAt !== undefined) {
    w.raw(K_COMPLETED_AT);
    w.number(r.completedAt);
  }
  if (r.failedAt !== undefined) {
    w.raw(K_FAILED_AT);
    w.number(r.failedAt);
  }
  if (r.cancelRequested) {
    w.raw(K_CANCEL_REQUESTED);
    w.byte(0xc3);
  }
  return w.finish();
}

// ---- fast MessagePack reader for records ----

/** Thrown inside the fast reader to give up; the generic decoder then decides. */
const BAIL = Symbol('bail');

/** Reads one record's bytes from the front; every method throws BAIL on what it does not expect. */
class RecordReader {
  pos = 0;
  private view: DataView | undefined;

  constructor(readonly buf: Uint8Array) {}

  get done(): boolean {
    return this.pos === this.buf.length;
  }

  need(n: number): void {
    if (this.pos + n > this.buf.length) throw BAIL;
  }

  private u16(): number {
    this.need(2);
    const b = this.buf;
    const o = this.pos;
    this.pos = o + 2;
    return (b[o] << 8) | b[o + 1];
  }

  private u32(): number {
    this.need(4);
    const b = this.buf;
    const o = this.pos;
    this.pos = o + 4;
    return b[o] * 0x1000000 + ((b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]);
  }

  private i32(): number {
    this.need(4);
    const b = this.buf;
    const o = this.pos;
    this.pos = o + 4;
    return (b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3];
  }

  private dataView(): DataView {
    return (this.view ??= new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength));
  }

  /** An ASCII string of `n` bytes at the cursor (non-ASCII ⇒ bail). */
  private asciiAt(n: number): string {
    this.need(n);
    const b = this.buf;
    const start = this.pos;
    const end = start + n;
    for (let i = start; i < end; i++) if (b[i] >= 0x80) throw BAIL;
    this.pos = end;
    if (n === 0) return '';
    return String.fromCharCode.apply(null, b.subarray(start, end) as unknown as number[]);
  }

  /** A string value, or undefined for nil. */
  str(): string | undefined {
    this.need(1);
    const h = this.buf[this.pos++];
    if (h >= 0xa0 && h <= 0xbf) return this.asciiAt(h - 0xa0);
    if (h === 0xd9) {
      this.need(1);
      return this.asciiAt(this.buf[this.pos++]);
    }
    if (h === 0xda) return this.asciiAt(this.u16());
    if (h === 0xdb) return this.asciiAt(this.u32());
    if (h === 0xc0) return undefined;
    throw BAIL;
  }

  /** A bin value (a view, as the generic decoder returns), or undefined for nil. */
  bin(): Uint8Array | undefined {
    this.need(1);
    const h = this.buf[this.pos++];
    let n: number;
    if (h === 0xc4) {
      this.need(1);
      n = this.buf[this.pos++];
    } else if (h === 0xc5) n = this.u16();
    else if (h === 0xc6) n = this.u32();
    else if (h === 0xc0) return undefined;
    else throw BAIL;
    this.need(n);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** A number value, or undefined for nil. */
  num(): number | undefined {
    this.need(1);
    const h = this.buf[this.pos++];
    if (h < 0x80) return h;
    if (h >= 0xe0) return h - 0x100;
    switch (h) {
      case 0xcc:
        this.need(1);
        return this.buf[this.pos++];
      case 0xcd:
        return this.u16();
      case 0xce:
        return this.u32();
      case 0xcf: {
        const hi = this.u32();
        return hi * 0x100000000 + this.u32();
      }
      case 0xd0: {
        this.need(1);
        const v = this.buf[this.pos++];
        return v >= 0x80 ? v - 0x100 : v;
      }
      case 0xd1: {
        const v = this.u16();
        return v >= 0x8000 ? v - 0x10000 : v;
      }
      case 0xd2:
        return this.i32();
      case 0xd3: {
        const hi = this.i32();
        return hi * 0x100000000 + this.u32();
      }
      case 0xca: {
        this.need(4);
        const v = this.dataView().getFloat32(this.pos);
        this.pos += 4;
        return v;
      }
      case 0xcb: {
        this.need(8);
        const v = this.dataView().getFloat64(this.pos);
        this.pos += 8;
        return v;
      }
      case 0xc0:
        return undefined;
      default:
        throw BAIL;
    }
  }

  /** A boolean value, with nil read as false. */
  bool(): boolean {
    this.need(1);
    const b = this.buf[this.pos++];
    if (b === 0xc3) return true;
    if (b === 0xc2 || b === 0xc0) return false;
    throw BAIL;
  }

  /** True (and the cursor past it) when the next value is nil. */
  nil(): boolean {
    this.need(1);
    if (this.buf[this.pos] !== 0xc0) return false;
    this.pos++;
    return true;
  }

  mapHeader(): number {
    this.need(1);
    const h = this.buf[this.pos++];
    if (h >= 0x80 && h <= 0x8f) return h - 0x80;
    if (h === 0xde) return this.u16();
    throw BAIL;
  }

  /** True when the fixstr key of `n` bytes at `start` equals `name` (its bytes after the header). */
  keyIs(name: Uint8Array, start: number, n: number): boolean {
    if (name.length !== n + 1) return false;
    const b = this.buf;
    for (let i = 0; i < n; i++) if (b[start + i] !== name[i + 1]) return false;
    return true;
  }
}

function decodeFast(bytes: Uint8Array): JobRecord | undefined {
  try {
    return readRecord(new RecordReader(bytes));
  } catch (e) {
    if (e === BAIL) return undefined;
    throw e;
  }
}

function readRecord(r: RecordReader): JobRecord | undefined {
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
  const buf = r.buf;
  const count = r.mapHeader();
  for (let i = 0; i < count; i++) {
    r.need(1);
    const kh = buf[r.pos];
    if (kh < 0xa0 || kh > 0xbf) throw BAIL;
    const n = kh - 0xa0;
    const start = r.pos + 1;
    r.need(n + 1);
    r.pos = start + n;
    // Dispatch on the key's length and first letter, then check every byte.
    const c0 = n > 0 ? buf[start] : 0;
    if (n === 1 && r.keyIs(K_V, start, n)) v = r.num();
    else if (n === 2 && r.keyIs(K_ID, start, n)) id = r.str();
    else if (n === 5 && c0 === 0x71 /* q */ && r.keyIs(K_QUEUE, start, n)) queue = r.str();
    else if (n === 7 && c0 === 0x70 /* p */ && r.keyIs(K_PAYLOAD, start, n)) payload = r.bin();
    else if (n === 10 && c0 === 0x70 && r.keyIs(K_PAYLOAD_REF, start, n)) payloadRef = r.str();
    else if (n === 7 && c0 === 0x68 /* h */ && r.keyIs(K_HEADERS, start, n)) {
      if (r.nil()) headers = undefined;
      else {
        const m = r.mapHeader();
        const out: Record<string, string> = {};
        for (let j = 0; j < m; j++) {
          const k = r.str();
          const hv = r.str();
          if (k === undefined || hv === undefined || k === '__proto__') throw BAIL;
          out[k] = hv;
        }
        headers = out;
      }
    } else if (n === 6 && c0 === 0x73 /* s */ && r.keyIs(K_STATUS, start, n)) status = r.str();
    else if (n === 8 && c0 === 0x61 /* a */ && r.keyIs(K_ATTEMPTS, start, n)) attempts = r.num();
    else if (n === 11 && c0 === 0x6d /* m */ && r.keyIs(K_MAX_ATTEMPTS, start, n)) maxAttempts = r.num();
    else if (n === 13 && c0 === 0x69 /* i */ && r.keyIs(K_INTERRUPTIONS, start, n)) interruptions = r.num();
    else if (n === 10 && c0 === 0x65 /* e */ && r.keyIs(K_ENQUEUED_AT, start, n)) enqueuedAt = r.num();
    else if (n === 9 && c0 === 0x63 /* c */ && r.keyIs(K_CLAIMED_AT, start, n)) claimedAt = r.num();
    else if (n === 5 && c0 === 0x72 /* r */ && r.keyIs(K_RUN_AT, start, n)) runAt = r.num();
    else if (n === 7 && c0 === 0x77 /* w */ && r.keyIs(K_WOKEN_AT, start, n)) wokenAt = r.num();
    else if (n === 11 && c0 === 0x77 && r.keyIs(K_WAKE_PAYLOAD, start, n)) wakePayload = r.bin();
    else if (n === 8 && c0 === 0x70 && r.keyIs(K_PRIORITY, start, n)) priority = r.num();
    else if (n === 9 && c0 === 0x6c /* l */ && r.keyIs(K_LAST_ERROR, start, n)) lastError = r.str();
    else if (n === 8 && c0 === 0x64 /* d */ && r.keyIs(K_DEDUP_KEY, start, n)) dedup = r.str();
    else if (n === 11 && c0 === 0x63 && r.keyIs(K_COMPLETED_AT, start, n)) completedAt = r.num();
    else if (n === 8 && c0 === 0x66 /* f */ && r.keyIs(K_FAILED_AT, start, n)) failedAt = r.num();
    else if (n === 15 && c0 === 0x63 && r.keyIs(K_CANCEL_REQUESTED, start, n)) cancelRequested = r.bool();
    else throw BAIL;
  }
  if (!r.done) throw BAIL;
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
