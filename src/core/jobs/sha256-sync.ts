/**
 * SHA-256 computed synchronously (FIPS 180-4). WebCrypto's digest is async only, and a job's
 * `idempotencyKey` is a synchronous function of its input (the runner and a cluster call it while
 * validating a submission), so the payload key (payload-key.ts) needs a digest it can return at
 * once. Checked against WebCrypto in the tests. Not for secrets: it is not constant-time.
 */

const PRIMES = [
  2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163,
  167, 173, 179, 181, 191, 193, 197, 199, 211, 223, 227, 229, 233, 239, 241, 251, 257, 263, 269, 271, 277, 281, 283, 293, 307, 311,
];

/** The first 32 bits of the fractional part of `x` (how the standard defines its constants). */
const fractionBits = (x: number): number => ((x - Math.floor(x)) * 0x1_0000_0000) >>> 0;

/** Round constants: cube roots of the first 64 primes. */
const K = Uint32Array.from(PRIMES, (p) => fractionBits(Math.cbrt(p)));
/** Initial hash: square roots of the first 8 primes. */
const H0 = Uint32Array.from(PRIMES.slice(0, 8), (p) => fractionBits(Math.sqrt(p)));

const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n));

export function sha256Sync(data: Uint8Array): Uint8Array {
  // Message, 0x80, zeros, then the bit length as a 64-bit big-endian number; a multiple of 64 bytes.
  const blocks = new Uint8Array((((data.length + 8) >> 6) + 1) << 6);
  blocks.set(data);
  blocks[data.length] = 0x80;
  const view = new DataView(blocks.buffer);
  view.setUint32(blocks.length - 8, Math.floor(data.length / 0x2000_0000));
  view.setUint32(blocks.length - 4, (data.length << 3) >>> 0);

  const h = Uint32Array.from(H0);
  const w = new Uint32Array(64);
  for (let offset = 0; offset < blocks.length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[i] = w[i - 16]! + s0 + w[i - 7]! + s1;
    }
    let a = h[0]!;
    let b = h[1]!;
    let c = h[2]!;
    let d = h[3]!;
    let e = h[4]!;
    let f = h[5]!;
    let g = h[6]!;
    let hh = h[7]!;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    // Uint32Array stores modulo 2^32.
    h[0] = h[0]! + a;
    h[1] = h[1]! + b;
    h[2] = h[2]! + c;
    h[3] = h[3]! + d;
    h[4] = h[4]! + e;
    h[5] = h[5]! + f;
    h[6] = h[6]! + g;
    h[7] = h[7]! + hh;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setUint32(i * 4, h[i]!);
  return out;
}
