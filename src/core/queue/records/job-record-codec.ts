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
import { BAIL, MsgpackReader } from './msgpack-reader.js';
import { binSize, MsgpackWriter, numSize, strSize } from './msgpack-writer.js';

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
    requeuedAt: record.requeuedAt,
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
  const optionalNumbers = ['claimedAt', 'runAt', 'wokenAt', 'completedAt', 'failedAt', 'requeuedAt'] as const;
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

// ---- fast path ----

function encodeFast(r: JobRecord): Uint8Array | undefined {
  // Count the fields and the exact size first, so the record is written into a buffer of its
  // own length (one allocation; the writer still grows should the sum fall short).
  // Requeued records are rare: the generic encoder writes them (the fast reader leaves them to it too).
  if (r.requeuedAt !== undefined) return undefined;
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
  const w = new MsgpackWriter(size + (count < 16 ? 1 : 3));
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

function decodeFast(bytes: Uint8Array): JobRecord | undefined {
  try {
    return readRecord(new MsgpackReader(bytes));
  } catch (e) {
    if (e === BAIL) return undefined;
    throw e;
  }
}

function readRecord(r: MsgpackReader): JobRecord | undefined {
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
