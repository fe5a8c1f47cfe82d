import { describe, expect, it } from 'vitest';
import { utf8 } from '../../../src/core/bytes.js';
import { BloomFilterBuilder, bloomKey, bloomMayContain, bloomMayContainKey } from '../../../src/core/kv/tables/bloom-filter.js';

/** The filter as tables already stored were built (hashing every key at the end): the format. */
function referenceFilter(keys: readonly Uint8Array[]): Uint8Array {
  const filter = new Uint8Array(Math.ceil(Math.max(64, keys.length * 10) / 8));
  const nbits = filter.length * 8;
  for (const key of keys) {
    let h1 = 0x811c9dc5;
    let h2 = 0x01000193 ^ key.length;
    for (let i = 0; i < key.length; i++) {
      h1 = Math.imul(h1 ^ key[i], 0x01000193);
      h2 = Math.imul(h2 ^ key[i], 0x5bd1e995) ^ (h2 >>> 15);
    }
    const a = h1 >>> 0;
    const b = (h2 | 1) >>> 0;
    for (let i = 0; i < 7; i++) {
      const at = ((a + Math.imul(i, b)) >>> 0) % nbits;
      filter[at >>> 3] |= 1 << (at & 7);
    }
  }
  return filter;
}

const keys = (n: number, tag: string): Uint8Array[] => Array.from({ length: n }, (_, i) => utf8(`${tag}/${i}/${'k'.repeat(i % 13)}`));

describe('BloomFilterBuilder', () => {
  it('builds byte for byte the filter stored tables already hold (growing past its first buffer)', () => {
    for (const n of [0, 1, 7, 1024, 5000]) {
      const b = new BloomFilterBuilder();
      const ks = keys(n, 'in');
      for (const k of ks) b.add(k);
      expect(b.finish()).toEqual(referenceFilter(ks));
    }
  });

  it('answers yes for every added key and rarely for others', () => {
    const b = new BloomFilterBuilder();
    const present = keys(5000, 'in');
    for (const k of present) b.add(k);
    const filter = b.finish();
    for (const k of present) expect(bloomMayContain(filter, k)).toBe(true);
    const falsePositives = keys(10_000, 'out').filter((k) => bloomMayContain(filter, k)).length;
    expect(falsePositives).toBeLessThan(300); // ~1% expected
  });

  it("a key hashed once probes any filter as hashing it per filter does (and an empty filter holds everything)", () => {
    const filters = [0, 1, 300, 5000].map((n) => {
      const b = new BloomFilterBuilder();
      for (const k of keys(n, 'in')) b.add(k);
      return b.finish();
    });
    filters.push(new Uint8Array(0));
    for (const k of [...keys(400, 'in'), ...keys(400, 'out')]) {
      const hashed = bloomKey(k);
      for (const filter of filters) expect(bloomMayContainKey(filter, hashed)).toBe(bloomMayContain(filter, k));
    }
    expect(bloomMayContainKey(new Uint8Array(0), bloomKey(utf8('x')))).toBe(true);
  });
});
