import { describe, expect, it } from 'vitest';
import { compareBytes, concatBytes, startsWith, utf8 } from '../../../src/core/bytes.js';
import {
  claimedKey,
  claimedQueuePrefix,
  cursorKey,
  deadKey,
  dedupKey,
  doneKey,
  HEARTBEAT_KEY,
  historyKey,
  jobIndexKey,
  parseStatsKey,
  parseTimeKey,
  pendingKey,
  pendingQueuePrefix,
  scheduledKey,
  statsKey,
  TAG,
  userKey,
} from '../../../src/core/queue/records/keys.js';

describe('queue key layout', () => {
  it('builds exactly the documented bytes (ASCII fast path and UTF-8 alike)', () => {
    const u64 = (ms: number) => {
      const out = new Uint8Array(8);
      new DataView(out.buffer).setBigUint64(0, BigInt(ms));
      return out;
    };
    const u32 = (n: number) => Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
    for (const queue of ['q', 'emails', 'é-queue']) {
      const lq = concatBytes(Uint8Array.of(utf8(queue).length), utf8(queue));
      for (const id of ['01JABCDEFGHJKMNPQRSTVWXYZ0', 'x', 'ünï']) {
        expect(pendingKey(queue, 1000, id)).toEqual(concatBytes(Uint8Array.of(TAG.pending, 1), lq, u32(1000), utf8(id)));
        expect(pendingKey(queue, 2 ** 32 - 1, id)).toEqual(concatBytes(Uint8Array.of(TAG.pending, 1), lq, u32(2 ** 32 - 1), utf8(id)));
        expect(claimedKey(queue, id)).toEqual(concatBytes(Uint8Array.of(TAG.claimed, 1), lq, utf8(id)));
        expect(deadKey(queue, id)).toEqual(concatBytes(Uint8Array.of(TAG.dead, 1), lq, utf8(id)));
        expect(dedupKey(queue, id)).toEqual(concatBytes(Uint8Array.of(TAG.dedup, 1), lq, utf8(id)));
        for (const ms of [0, 1, 1_700_000_000_123, 2 ** 53 - 1]) {
          expect(scheduledKey(ms, queue, id)).toEqual(concatBytes(Uint8Array.of(TAG.scheduled, 1), u64(ms), lq, utf8(id)));
          expect(doneKey(ms, queue, id)).toEqual(concatBytes(Uint8Array.of(TAG.done, 1), u64(ms), lq, utf8(id)));
        }
        expect(scheduledKey(-5.5, queue, id)).toEqual(scheduledKey(0, queue, id));
        expect(jobIndexKey(id)).toEqual(concatBytes(Uint8Array.of(TAG.jobIndex, 1), utf8(id)));
        expect(historyKey(id)).toEqual(concatBytes(Uint8Array.of(TAG.history, 1), utf8(id)));
      }
      expect(statsKey(queue, 'claimed')).toEqual(concatBytes(Uint8Array.of(TAG.stats, 1), lq, utf8('claimed')));
    }
  });

  it('orders pending keys by priority, then id', () => {
    const keys = [pendingKey('q', 1000, 'B'), pendingKey('q', 100, 'Z'), pendingKey('q', 1000, 'A'), pendingKey('q', 10000, 'A')];
    const sorted = [...keys].sort(compareBytes);
    expect(sorted).toEqual([keys[1], keys[2], keys[0], keys[3]]);
  });

  it('never lets queue "a" share a prefix with queue "ab" (pending and claimed)', () => {
    expect(startsWith(pendingKey('ab', 1, 'x'), pendingQueuePrefix('a'))).toBe(false);
    expect(startsWith(claimedKey('ab', 'x'), claimedQueuePrefix('a'))).toBe(false);
    expect(startsWith(pendingKey('a', 1, 'x'), pendingQueuePrefix('a'))).toBe(true);
  });

  it('orders time-first keys globally by time across queues', () => {
    const a = scheduledKey(2000, 'a', '1');
    const b = scheduledKey(1000, 'zzz', '2');
    expect(compareBytes(b, a)).toBeLessThan(0);
    expect(compareBytes(doneKey(5, 'z', 'x'), doneKey(6, 'a', 'x'))).toBeLessThan(0);
  });

  it('round-trips timestamps and rejects other tags or short keys', () => {
    expect(parseTimeKey(scheduledKey(1_700_000_000_123, 'q', 'id'), 'scheduled')).toBe(1_700_000_000_123);
    expect(parseTimeKey(doneKey(42, 'q', 'id'), 'done')).toBe(42);
    expect(() => parseTimeKey(doneKey(42, 'q', 'id'), 'scheduled')).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA' }));
    expect(() => parseTimeKey(Uint8Array.of(TAG.scheduled, 1, 0), 'scheduled')).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA' }));
  });

  it('round-trips stats keys', () => {
    expect(parseStatsKey(statsKey('my-queue', 'scheduled'))).toEqual({ queue: 'my-queue', metric: 'scheduled' });
  });

  it('keeps every key space disjoint: no key of one space prefixes another', () => {
    const samples = [
      pendingKey('q', 1, 'id'),
      claimedKey('q', 'id'),
      scheduledKey(1, 'q', 'id'),
      doneKey(1, 'q', 'id'),
      deadKey('q', 'id'),
      jobIndexKey('id'),
      dedupKey('q', 'k'),
      cursorKey('q'),
      statsKey('q', 'pending'),
      historyKey('id'),
      HEARTBEAT_KEY,
      userKey(Uint8Array.of(1, 1, 1)),
    ];
    const tags = new Set(samples.map((k) => k[0]));
    expect(tags.size).toBe(samples.length);
    for (const a of samples) for (const b of samples) if (a !== b) expect(startsWith(b, a)).toBe(false);
  });

  it('puts caller KV keys behind the user tag so they can never look like an internal key', () => {
    const forged = pendingKey('q', 1, 'id');
    expect(userKey(forged)[0]).toBe(0xff);
    expect(startsWith(userKey(forged), pendingQueuePrefix('q'))).toBe(false);
  });
});
