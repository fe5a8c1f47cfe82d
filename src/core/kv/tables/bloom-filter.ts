/**
 * A Bloom filter per table so point reads skip tables that cannot hold the key (most of them, for
 * the queue's per-job lookups). Double hashing over two FNV-1a variants; ~1% false positives at
 * 10 bits per key with 7 probes.
 */
const BITS_PER_KEY = 10;
const PROBES = 7;

/** The two hashes of `key`, written to `out[at]` and `out[at + 1]`. */
function hashInto(key: Uint8Array, out: Uint32Array, at: number): void {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ key.length;
  for (let i = 0; i < key.length; i++) {
    h1 = Math.imul(h1 ^ key[i], 0x01000193);
    h2 = Math.imul(h2 ^ key[i], 0x5bd1e995) ^ (h2 >>> 15);
  }
  out[at] = h1 >>> 0;
  out[at + 1] = (h2 | 1) >>> 0;
}

/**
 * Builds a filter key by key. Hashing is the costly part and happens in `add`, so a table writer
 * that adds entries in slices between event-loop turns pays for it in those slices; `finish`
 * only sets bits (hashing every key of a large table there was one long synchronous stretch).
 */
export class BloomFilterBuilder {
  private hashes = new Uint32Array(2048);
  private count = 0;

  add(key: Uint8Array): void {
    if (2 * this.count + 2 > this.hashes.length) {
      const grown = new Uint32Array(this.hashes.length * 2);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    hashInto(key, this.hashes, 2 * this.count);
    this.count++;
  }

  finish(): Uint8Array {
    const bits = Math.max(64, this.count * BITS_PER_KEY);
    const filter = new Uint8Array(Math.ceil(bits / 8));
    const nbits = filter.length * 8;
    const hashes = this.hashes;
    for (let k = 0; k < 2 * this.count; k += 2) {
      const h1 = hashes[k];
      const h2 = hashes[k + 1];
      for (let i = 0; i < PROBES; i++) {
        const at = ((h1 + Math.imul(i, h2)) >>> 0) % nbits;
        filter[at >>> 3] |= 1 << (at & 7);
      }
    }
    return filter;
  }
}

const probe = new Uint32Array(2);

/** A key's two hashes, computed once to probe many tables' filters (`bloomMayContainKey`). */
export interface BloomKey {
  readonly h1: number;
  readonly h2: number;
}

export function bloomKey(key: Uint8Array): BloomKey {
  hashInto(key, probe, 0);
  return { h1: probe[0], h2: probe[1] };
}

export function bloomMayContain(filter: Uint8Array, key: Uint8Array): boolean {
  if (filter.length === 0) return true;
  hashInto(key, probe, 0);
  return probeFilter(filter, probe[0], probe[1]);
}

export function bloomMayContainKey(filter: Uint8Array, key: BloomKey): boolean {
  return filter.length === 0 || probeFilter(filter, key.h1, key.h2);
}

function probeFilter(filter: Uint8Array, h1: number, h2: number): boolean {
  const nbits = filter.length * 8;
  for (let i = 0; i < PROBES; i++) {
    const at = ((h1 + Math.imul(i, h2)) >>> 0) % nbits;
    if ((filter[at >>> 3] & (1 << (at & 7))) === 0) return false;
  }
  return true;
}
