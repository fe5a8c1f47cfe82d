import { describe, expect, it } from 'vitest';
import { MockClock } from '../../../src/core/clock.js';
import { decodeAttempts, encodeAttempt } from '../../../src/core/queue/records/attempt-history.js';
import { isUlid, JobIdGenerator, ulidTime } from '../../../src/core/queue/records/job-id.js';
import { decodeJobRecord, decodeJobRecordGeneric, encodeJobRecord, encodeJobRecordGeneric } from '../../../src/core/queue/records/job-record-codec.js';
import type { JobRecord } from '../../../src/core/queue/records/job-record.js';
import { encodeRecord } from '../../../src/core/codec.js';
import { historyKey, statsKey } from '../../../src/core/queue/records/keys.js';
import { decodeI64, decodeI64Number, encodeI64, queueMergeOperator } from '../../../src/core/queue/records/merge-operator.js';
import { concatBytes } from '../../../src/core/bytes.js';

const base: JobRecord = {
  id: 'job-1',
  queue: 'q',
  payload: Uint8Array.of(1, 2, 3),
  headers: { trace: 'abc' },
  status: 'pending',
  attempts: 0,
  maxAttempts: 3,
  interruptions: 0,
  enqueuedAt: 1000,
  priority: 1000,
  cancelRequested: false,
};

describe('job records', () => {
  it('round-trip with every optional field', () => {
    const full: JobRecord = { ...base, claimedAt: 5, runAt: 6, wokenAt: 7, wakePayload: Uint8Array.of(9), lastError: 'boom', dedupKey: 'd', completedAt: 8, failedAt: 9, cancelRequested: true, interruptions: 4 };
    expect(decodeJobRecord(encodeJobRecord(full))).toEqual(full);
    expect(decodeJobRecord(encodeJobRecord(base))).toEqual(base);
  });

  // Issue #13: the interruption count is a field added later. Records written before it (or with
  // nothing interrupted) carry no such key and read back as 0, so old stores stay readable.
  it('omits interruptions when 0 and reads a record without the field as 0', () => {
    const bytes = encodeJobRecord(base);
    expect(new TextDecoder().decode(bytes)).not.toContain('interruptions');
    const old = encodeRecord({ v: 1, id: 'a', queue: 'q', status: 'claimed', attempts: 2, maxAttempts: 3, enqueuedAt: 5, priority: 1 });
    expect(decodeJobRecord(old)).toMatchObject({ attempts: 2, interruptions: 0 });
    expect(decodeJobRecordGeneric(old)).toMatchObject({ interruptions: 0 });
    const interrupted = encodeJobRecord({ ...base, interruptions: 7 });
    expect(decodeJobRecord(interrupted).interruptions).toBe(7);
    expect(decodeJobRecordGeneric(interrupted).interruptions).toBe(7);
  });

  it('store an offloaded record without its payload bytes', () => {
    const offloaded = { ...base, payload: new Uint8Array(1000), payloadRef: 'REF' };
    const bytes = encodeJobRecord(offloaded);
    expect(bytes.length).toBeLessThan(200);
    expect(decodeJobRecord(bytes)).toMatchObject({ payloadRef: 'REF', payload: new Uint8Array(0) });
  });

  it('reject undecodable bytes with CORRUPT_DATA', () => {
    expect(() => decodeJobRecord(Uint8Array.of(0xc1))).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA' }));
    expect(() => decodeJobRecord(Uint8Array.of(0x90))).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA' }));
  });
});

describe('job record fast codec', () => {
  // A deterministic generator of varied records: every optional field on or off, numbers across
  // every MessagePack integer width and some floats, ASCII and non-ASCII strings, big payloads.
  function variants(): JobRecord[] {
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    const numbers = [0, 1, 127, 128, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, 1_700_000_000_123, 2 ** 53 - 1, -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31), -(2 ** 31) - 1, -(2 ** 40), 0.5, 1e300, -2.25];
    const strings = ['', 'a', 'x'.repeat(31), 'y'.repeat(32), 'z'.repeat(255), 'w'.repeat(256), 'v'.repeat(70_000), 'héllo', '日本', 'e\u0301'];
    const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)];
    const out: JobRecord[] = [];
    for (let i = 0; i < 400; i++) {
      const r: Record<string, unknown> = {
        id: rnd(4) === 0 ? pick(strings) : `01J${i}ABCDEFGHJKMNPQRSTVWXYZ`,
        queue: rnd(5) === 0 ? pick(strings) : 'emails',
        payload: new Uint8Array(pick([0, 1, 100, 255, 256, 65535, 65536, 70_000])).fill(i & 0xff),
        headers: rnd(2) === 0 ? {} : Object.fromEntries(Array.from({ length: rnd(18) }, (_, j) => [`h${j}${rnd(3) === 0 ? pick(strings) : ''}`, rnd(3) === 0 ? pick(strings) : `v${j}`])),
        status: pick(['pending', 'scheduled', 'claimed', 'done', 'dead']),
        attempts: pick(numbers),
        maxAttempts: pick(numbers),
        interruptions: rnd(3) === 0 ? pick(numbers) : 0,
        enqueuedAt: pick(numbers),
        priority: pick(numbers),
        cancelRequested: rnd(3) === 0,
      };
      if (rnd(4) === 0) r.payloadRef = rnd(3) === 0 ? pick(strings) : `ref-${i}`;
      for (const f of ['claimedAt', 'runAt', 'wokenAt', 'completedAt', 'failedAt']) if (rnd(2) === 0) r[f] = pick(numbers);
      if (rnd(3) === 0) r.wakePayload = new Uint8Array(pick([0, 3, 300]));
      if (rnd(2) === 0) r.lastError = pick(strings);
      if (rnd(3) === 0) r.dedupKey = pick(strings);
      out.push(r as unknown as JobRecord);
    }
    return out;
  }

  it('writes exactly the bytes of the generic encoder', () => {
    for (const [i, r] of variants().entries()) {
      const fast = encodeJobRecord(r);
      const generic = encodeJobRecordGeneric(r);
      // Buffer.compare: vitest's deep equality is far too slow on 70 KB arrays.
      expect({ i, same: Buffer.compare(fast, generic) === 0 }).toEqual({ i, same: true });
    }
  });

  it('reads back exactly what the generic decoder returns', () => {
    for (const r of variants()) {
      const bytes = encodeJobRecordGeneric(r);
      expect(decodeJobRecord(bytes)).toStrictEqual(decodeJobRecordGeneric(bytes));
    }
  });

  it('reads maps written in another field order, with nil fields, through either path alike', () => {
    const shapes: Record<string, unknown>[] = [
      { status: 'pending', v: 1, queue: 'q', id: 'a', attempts: 0, maxAttempts: 3, enqueuedAt: 5, priority: 1, payload: Uint8Array.of(1) },
      { v: 1, id: 'a', queue: 'q', status: 'done', attempts: 1, maxAttempts: 3, enqueuedAt: 5, priority: 1, headers: null, lastError: null, cancelRequested: false },
      { v: 1, id: 'a', queue: 'q', status: 'done', attempts: 1, maxAttempts: 3, enqueuedAt: 5, priority: 1, unknown: 7 },
      { v: 1, id: 'a', queue: 'q', status: 'done', attempts: 1, maxAttempts: 3, enqueuedAt: 5, priority: 1, cancelRequested: 'yes' },
    ];
    for (const shape of shapes) {
      const bytes = encodeRecord(shape);
      expect(decodeJobRecord(bytes)).toStrictEqual(decodeJobRecordGeneric(bytes));
    }
  });

  it('rejects what the generic decoder rejects, with the same error', () => {
    const good = encodeJobRecord(base);
    const bad: Uint8Array[] = [
      encodeRecord({ v: 2, id: 'a', queue: 'q', status: 'pending', attempts: 0, maxAttempts: 3, enqueuedAt: 5, priority: 1 }),
      encodeRecord({ v: 1, id: 'a', queue: 'q', status: 'weird', attempts: 0, maxAttempts: 3, enqueuedAt: 5, priority: 1 }),
      encodeRecord({ v: 1, id: 'a', queue: 'q', status: 'pending', maxAttempts: 3, enqueuedAt: 5, priority: 1 }),
      encodeRecord({ v: 1, id: 7, queue: 'q', status: 'pending', attempts: 0, maxAttempts: 3, enqueuedAt: 5, priority: 1 }),
      encodeRecord({ v: 1, id: 'a', queue: 'q', status: 'pending', attempts: 0, maxAttempts: 3, enqueuedAt: 5, priority: 1, headers: { a: 1 } }),
      good.subarray(0, good.length - 1),
      Uint8Array.of(...good, 0),
    ];
    for (const bytes of bad) {
      let generic: unknown;
      try {
        decodeJobRecordGeneric(bytes);
      } catch (e) {
        generic = e;
      }
      expect(generic).toMatchObject({ code: 'CORRUPT_DATA' });
      expect(() => decodeJobRecord(bytes)).toThrow((generic as Error).message);
    }
  });
});

describe('attempt history', () => {
  it('decodes concatenated entries in order; empty or absent ⇒ []', () => {
    const a = encodeAttempt({ attempt: 1, claimedAt: 10, recordedAt: 20, outcome: 'retried', error: 'x' });
    const b = encodeAttempt({ attempt: 2, recordedAt: 30, outcome: 'lease_expired' });
    expect(decodeAttempts(concatBytes(a, b))).toEqual([
      { attempt: 1, claimedAt: 10, recordedAt: 20, outcome: 'retried', error: 'x' },
      { attempt: 2, recordedAt: 30, outcome: 'lease_expired' },
    ]);
    expect(decodeAttempts(new Uint8Array(0))).toEqual([]);
    expect(decodeAttempts(undefined)).toEqual([]);
  });
});

describe('merge operator', () => {
  it('sums signed counters and concatenates history, with undefined as identity', () => {
    const k = statsKey('q', 'pending');
    const merged = queueMergeOperator(k, queueMergeOperator(k, undefined, encodeI64(5n)), encodeI64(-7n));
    expect(decodeI64(merged)).toBe(-2n);
    const h = historyKey('id');
    expect(queueMergeOperator(h, Uint8Array.of(1), Uint8Array.of(2))).toEqual(Uint8Array.of(1, 2));
    expect(queueMergeOperator(h, undefined, Uint8Array.of(2))).toEqual(Uint8Array.of(2));
  });
});

describe('counter encoding', () => {
  it('is signed 64-bit little-endian for numbers across the whole safe range, and reads back exactly', () => {
    const values = [0, 1, -1, 255, 256, -257, 2 ** 31, -(2 ** 31), 2 ** 32, -(2 ** 32), 2 ** 40 + 7, -(2 ** 40) - 7, 2 ** 53 - 1, -(2 ** 53 - 1), 123456789012];
    for (const v of values) {
      const reference = new Uint8Array(8);
      new DataView(reference.buffer).setBigInt64(0, BigInt(v), true);
      expect(encodeI64(v)).toEqual(reference);
      expect(decodeI64Number(encodeI64(v))).toBe(v);
      expect(decodeI64(encodeI64(v))).toBe(BigInt(v));
    }
  });
});

describe('job ids', () => {
  it('are ULIDs carrying the clock time', () => {
    const clock = new MockClock(1_700_000_000_000);
    const id = new JobIdGenerator(clock, (b) => b.fill(7)).next();
    expect(isUlid(id)).toBe(true);
    expect(ulidTime(id)).toBe(1_700_000_000_000);
  });

  it('draw random parts from the source 16 at a time, each new millisecond taking the next unused one', async () => {
    const clock = new MockClock(1_700_000_000_000);
    const sizes: number[] = [];
    let draw = 0;
    const gen = new JobIdGenerator(clock, (b) => {
      sizes.push(b.length);
      for (let i = 0; i < b.length; i++) b[i] = (draw * 160 + i) % 256;
      draw++;
    });
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      ids.push(gen.next());
      await clock.advance(1);
    }
    expect(sizes).toEqual([160, 160, 160]);
    expect(new Set(ids.map((id) => id.slice(10))).size).toBe(40);
  });

  it('strictly increase within one frozen millisecond and when the clock steps back', async () => {
    const clock = new MockClock(1_700_000_000_000);
    const gen = new JobIdGenerator(clock, (b) => b.fill(0xff));
    const ids = Array.from({ length: 50 }, () => gen.next());
    for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
    expect(new Set(ids).size).toBe(50);
  });
});
