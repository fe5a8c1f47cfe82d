import { describe, expect, it } from 'vitest';
import { compareBytes, startsWith } from '../../../src/core/bytes.js';
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
} from '../../../src/core/queue/keys.js';

describe('queue key layout', () => {
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
