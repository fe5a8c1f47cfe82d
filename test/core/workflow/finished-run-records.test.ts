/**
 * The finished-run record's encoding (records.ts) and keys (keys.ts): round trips, what is left
 * out to keep a record small and under the KV value cap, and the refusal of other versions.
 */
import { describe, expect, it } from 'vitest';
import { encodeRecord } from '../../../src/core/codec.js';
import { MAX_KV_VALUE_SIZE } from '../../../src/core/queue/index.js';
import { endedIndexKey, finishedRunKey, parseEndedIndexKey } from '../../../src/core/workflow/keys.js';
import { decodeFinishedRun, encodeFinishedRun, MAX_KEPT_ERROR_CHARS, MAX_KEPT_RESULT_BYTES, type FinishedRunRecord } from '../../../src/core/workflow/records.js';
import { s } from './harness.js';

const base: FinishedRunRecord = {
  status: 'succeeded',
  result: new Uint8Array([1, 2, 3]),
  resultBytes: 3,
  error: null,
  headers: { owner: 'ann' },
  headersKept: true,
  finalStep: 4,
  endedAtMs: 1_700_000_005_000,
  submittedAtMs: 1_700_000_000_000,
  attempts: 2,
  jobId: null,
  inputHash: null,
};

describe('finished-run records', () => {
  it('round-trip every status with and without the optional fields', () => {
    expect(decodeFinishedRun(encodeFinishedRun(base))).toEqual(base);
    const failed: FinishedRunRecord = { ...base, status: 'failed', result: null, resultBytes: null, error: 'boom', headers: {}, submittedAtMs: null, attempts: null, finalStep: 0 };
    expect(decodeFinishedRun(encodeFinishedRun(failed))).toEqual(failed);
    const cancelled: FinishedRunRecord = { ...failed, status: 'cancelled', error: null, attempts: 0 };
    expect(decodeFinishedRun(encodeFinishedRun(cancelled))).toEqual(cancelled);
    // A clock that stepped back between submission and ending still round-trips.
    const skewed: FinishedRunRecord = { ...base, submittedAtMs: base.endedAtMs + 10 };
    expect(decodeFinishedRun(encodeFinishedRun(skewed))).toEqual(skewed);
    // runIdReuse 'after-retention' keeps the final job and the input hash, also behind nils.
    const kept: FinishedRunRecord = { ...failed, jobId: '0000000000001-abc', inputHash: new Uint8Array(32).fill(7) };
    expect(decodeFinishedRun(encodeFinishedRun(kept))).toEqual(kept);
  });

  it('refuses an input hash that is not 32 bytes as CORRUPT_DATA naming the field', () => {
    const bytes = encodeRecord([1, 0, 1, 5, null, null, null, null, null, null, null, 'job', new Uint8Array(3)]);
    expect(() => decodeFinishedRun(bytes)).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA', message: expect.stringContaining('field=inputHash') }));
  });

  it('stays small: a failed run without headers is a few bytes beyond its error text', () => {
    const bytes = encodeFinishedRun({ ...base, status: 'failed', result: null, resultBytes: null, error: 'x', headers: {}, attempts: 1 });
    expect(bytes.length).toBeLessThanOrEqual(20);
  });

  it('leaves out a result over 64 KiB (noting its length), cuts long errors, and drops headers that would not fit', () => {
    const big = new Uint8Array(MAX_KEPT_RESULT_BYTES + 1);
    const out = decodeFinishedRun(encodeFinishedRun({ ...base, result: big }));
    expect([out.result, out.resultBytes, out.headersKept]).toEqual([null, MAX_KEPT_RESULT_BYTES + 1, true]);
    const exact = decodeFinishedRun(encodeFinishedRun({ ...base, result: new Uint8Array(MAX_KEPT_RESULT_BYTES) }));
    expect(exact.result?.length).toBe(MAX_KEPT_RESULT_BYTES);

    const long = decodeFinishedRun(encodeFinishedRun({ ...base, status: 'failed', result: null, error: 'e'.repeat(MAX_KEPT_ERROR_CHARS + 50) }));
    expect(long.error).toBe(`${'e'.repeat(MAX_KEPT_ERROR_CHARS)}…`);

    const headers = { big: 'h'.repeat(MAX_KV_VALUE_SIZE) };
    const encoded = encodeFinishedRun({ ...base, headers });
    expect(encoded.length).toBeLessThan(MAX_KV_VALUE_SIZE);
    expect(decodeFinishedRun(encoded)).toMatchObject({ headers: {}, headersKept: false, result: base.result });
  });

  it('refuses another version or a damaged layout with CORRUPT_DATA', () => {
    const fields = [2, 0, 0, 1, null, 1];
    expect(() => decodeFinishedRun(encodeRecord(fields))).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA', details: expect.objectContaining({ field: 'version' }) }));
    expect(() => decodeFinishedRun(encodeRecord({ v: 1 }))).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA', details: expect.objectContaining({ field: 'layout' }) }));
    expect(() => decodeFinishedRun(encodeRecord([1, 7, 0, 1]))).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA', details: expect.objectContaining({ field: 'status' }) }));
    expect(() => decodeFinishedRun(encodeRecord([1, 0, -1, 1]))).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA', details: expect.objectContaining({ field: 'finalStep' }) }));
    expect(() => decodeFinishedRun(new Uint8Array([0xc1]))).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA' }));
  });

  it('keys: one namespace per queue name (URI-encoded), the index ordered by end time', () => {
    expect(s(finishedRunKey('workflow-steps', 'r1'))).toBe('workflow/outcomes/workflow-steps/r1');
    expect(s(finishedRunKey('a/b', 'r1'))).toBe('workflow/outcomes/a%2Fb/r1');
    const early = endedIndexKey('q', 5, 'z');
    const late = endedIndexKey('q', 40, 'a');
    expect(s(early)).toBe('workflow/ended/q/00000000000000000005/z');
    expect(Buffer.compare(early, late)).toBeLessThan(0);
    expect(parseEndedIndexKey('q', late)).toEqual({ endedAtMs: 40, runId: 'a' });
    expect(parseEndedIndexKey('other', late)).toBeUndefined();
    expect(parseEndedIndexKey('q', new TextEncoder().encode('workflow/ended/q/12/a'))).toBeUndefined();
  });
});
