import { describe, expect, it } from 'vitest';
import { MockClock } from '../../../src/core/clock.js';
import { decodeAttempts, encodeAttempt } from '../../../src/core/queue/attempt-history.js';
import { isUlid, JobIdGenerator, ulidTime } from '../../../src/core/queue/job-id.js';
import { decodeJobRecord, encodeJobRecord, type JobRecord } from '../../../src/core/queue/job-record.js';
import { historyKey, statsKey } from '../../../src/core/queue/keys.js';
import { decodeI64, encodeI64, queueMergeOperator } from '../../../src/core/queue/merge-operator.js';
import { concatBytes } from '../../../src/core/bytes.js';

const base: JobRecord = {
  id: 'job-1',
  queue: 'q',
  payload: Uint8Array.of(1, 2, 3),
  headers: { trace: 'abc' },
  status: 'pending',
  attempts: 0,
  maxAttempts: 3,
  enqueuedAt: 1000,
  priority: 1000,
  cancelRequested: false,
};

describe('job records', () => {
  it('round-trip with every optional field', () => {
    const full: JobRecord = { ...base, claimedAt: 5, runAt: 6, wokenAt: 7, wakePayload: Uint8Array.of(9), lastError: 'boom', dedupKey: 'd', completedAt: 8, failedAt: 9, cancelRequested: true };
    expect(decodeJobRecord(encodeJobRecord(full))).toEqual(full);
    expect(decodeJobRecord(encodeJobRecord(base))).toEqual(base);
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

describe('job ids', () => {
  it('are ULIDs carrying the clock time', () => {
    const clock = new MockClock(1_700_000_000_000);
    const id = new JobIdGenerator(clock, (b) => b.fill(7)).next();
    expect(isUlid(id)).toBe(true);
    expect(ulidTime(id)).toBe(1_700_000_000_000);
  });

  it('strictly increase within one frozen millisecond and when the clock steps back', async () => {
    const clock = new MockClock(1_700_000_000_000);
    const gen = new JobIdGenerator(clock, (b) => b.fill(0xff));
    const ids = Array.from({ length: 50 }, () => gen.next());
    for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
    expect(new Set(ids).size).toBe(50);
  });
});
