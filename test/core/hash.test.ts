import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256, sha256Hex } from '../../src/core/hash.js';

const reference = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

describe('sha256', () => {
  it('is SHA-256, for empty, block-boundary and large inputs', async () => {
    expect(await sha256Hex(new TextEncoder().encode('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    for (const size of [0, 1, 55, 56, 64, 100, 2047, 2048, 2049, 4096, 100_000]) {
      const data = Uint8Array.from({ length: size }, (_, i) => (i * 31 + size) & 0xff);
      const digest = await sha256(data);
      expect(digest).toBeInstanceOf(Uint8Array);
      expect(digest).toHaveLength(32);
      expect(Buffer.from(digest).toString('hex'), `size ${size}`).toBe(reference(data));
    }
  });

  it('hashes only the view, not the rest of its buffer', async () => {
    const buffer = new Uint8Array(5000).fill(7);
    for (const [start, end] of [[10, 110], [100, 4100]] as const) {
      const view = buffer.subarray(start, end);
      expect(await sha256Hex(view)).toBe(reference(view));
    }
  });
});
