import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ByteReader,
  ByteWriter,
  compareBytes,
  concatBytes,
  EMPTY_BYTES,
  equalBytes,
  fromBinaryString,
  fromHex,
  fromUtf8,
  prefixEnd,
  startsWith,
  toBinaryString,
  toHex,
  utf8,
} from '../../src/core/bytes.js';
import { CorruptDataError, isTaqubaError } from '../../src/core/errors.js';

const b = (...xs: number[]) => new Uint8Array(xs);
const corrupt = (what: string) => new CorruptDataError(`bad record: ${what}`);
const sign = (n: number) => Math.sign(n);

describe('compareBytes / equalBytes / startsWith / concat', () => {
  it('orders lexicographically by unsigned byte, shorter prefix first', () => {
    expect(compareBytes(b(), b())).toBe(0);
    expect(compareBytes(b(1, 2), b(1, 2))).toBe(0);
    expect(sign(compareBytes(b(), b(0)))).toBe(-1);
    expect(sign(compareBytes(b(1), b(1, 0)))).toBe(-1);
    expect(sign(compareBytes(b(1, 2), b(1, 3)))).toBe(-1);
    expect(sign(compareBytes(b(2), b(1, 255)))).toBe(1);
    expect(sign(compareBytes(b(0x7f), b(0x80)))).toBe(-1); // unsigned, not signed
    expect(sign(compareBytes(b(0xff), b(0x00, 0xff)))).toBe(1);
  });

  it('works on subarray views', () => {
    const buf = b(9, 1, 2, 3, 9);
    expect(compareBytes(buf.subarray(1, 4), b(1, 2, 3))).toBe(0);
    expect(equalBytes(buf.subarray(1, 4), b(1, 2, 3))).toBe(true);
  });

  it('is a total order consistent with equalBytes and sorting', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 }), fc.uint8Array({ maxLength: 8 }), (x, y) => {
        const c = compareBytes(x, y);
        expect(sign(compareBytes(y, x)) + sign(c)).toBe(0);
        expect(c === 0).toBe(equalBytes(x, y));
      }),
    );
  });

  it('equalBytes, startsWith, concatBytes', () => {
    expect(equalBytes(b(1, 2), b(1, 2))).toBe(true);
    expect(equalBytes(b(1, 2), b(1, 2, 3))).toBe(false);
    expect(equalBytes(b(1, 2), b(1, 3))).toBe(false);
    expect(startsWith(b(1, 2, 3), b(1, 2))).toBe(true);
    expect(startsWith(b(1, 2, 3), b())).toBe(true);
    expect(startsWith(b(1, 2), b(1, 2, 3))).toBe(false);
    expect(startsWith(b(1, 3, 3), b(1, 2))).toBe(false);
    expect(concatBytes()).toEqual(b());
    expect(concatBytes(b(1), EMPTY_BYTES, b(2, 3))).toEqual(b(1, 2, 3));
  });
});

describe('prefixEnd', () => {
  it('increments the last byte that is not 0xff and drops the 0xff tail', () => {
    expect(prefixEnd(b(1, 2, 3))).toEqual(b(1, 2, 4));
    expect(prefixEnd(b(1, 0xff))).toEqual(b(2));
    expect(prefixEnd(b(1, 0xfe, 0xff, 0xff))).toEqual(b(1, 0xff));
    expect(prefixEnd(b(0))).toEqual(b(1));
  });

  it('has no end for the empty prefix or an all-0xff prefix', () => {
    expect(prefixEnd(b())).toBeUndefined();
    expect(prefixEnd(b(0xff))).toBeUndefined();
    expect(prefixEnd(b(0xff, 0xff, 0xff))).toBeUndefined();
  });

  it('does not modify its input and returns a compact array', () => {
    const p = b(5, 0xff, 0xff);
    const end = prefixEnd(p)!;
    expect(p).toEqual(b(5, 0xff, 0xff));
    expect(end.byteLength).toBe(1);
    expect(end.buffer.byteLength).toBe(1);
  });

  it('bounds exactly the keys that start with the prefix', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4 }), fc.uint8Array({ maxLength: 6 }), (prefix, key) => {
        const end = prefixEnd(prefix);
        const inRange = compareBytes(key, prefix) >= 0 && (end === undefined || compareBytes(key, end) < 0);
        expect(inRange).toBe(startsWith(key, prefix));
      }),
      { numRuns: 2000 },
    );
  });

  it('matches extensions of the prefix, including with 0xff bytes', () => {
    const prefix = b(1, 0xff);
    const end = prefixEnd(prefix)!;
    expect(compareBytes(b(1, 0xff, 0xff, 0xff), end)).toBeLessThan(0);
    expect(compareBytes(b(2), end)).toBe(0);
  });
});

describe('text and hex', () => {
  it('utf8 round trip', () => {
    for (const s of ['', 'abc', 'héllo', '日本', '🙂', 'a\u0000b']) expect(fromUtf8(utf8(s))).toBe(s);
    expect(utf8('é')).toEqual(b(0xc3, 0xa9));
    // ASCII (the loop) and non-ASCII or long text (TextEncoder) give the standard encoding.
    const enc = new TextEncoder();
    for (const s of ['key/0001', '\u007f', 'x'.repeat(128) + 'é', 'y'.repeat(500), 'ascii then \u0080', '\ud800 lone surrogate']) {
      expect(utf8(s)).toEqual(enc.encode(s));
    }
  });

  it('fromUtf8 rejects malformed input', () => {
    expect(() => fromUtf8(b(0xff))).toThrow(TypeError);
    expect(() => fromUtf8(b(0xc3))).toThrow(TypeError);
  });

  it('toHex', () => {
    expect(toHex(b())).toBe('');
    expect(toHex(b(0, 1, 0x0f, 0x10, 0xff))).toBe('00010f10ff');
  });

  it('fromHex inverts toHex and refuses what is not hex', () => {
    const all = new Uint8Array(256).map((_, i) => i);
    expect(fromHex(toHex(all))).toEqual(all);
    expect(fromHex('0A0b')).toEqual(b(10, 11));
    for (const bad of ['0', 'zz', '0x00', '1 2']) expect(() => fromHex(bad)).toThrow(RangeError);
  });
});

describe('binary strings', () => {
  it('round-trip every byte value', () => {
    const all = new Uint8Array(256).map((_, i) => i);
    const s = toBinaryString(all);
    expect(s.length).toBe(256);
    expect(fromBinaryString(s)).toEqual(all);
    expect(toBinaryString(b())).toBe('');
  });

  it('round-trip arbitrary bytes and keep byte order under < and sort()', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 12 }), fc.uint8Array({ maxLength: 12 }), (x, y) => {
        const sx = toBinaryString(x);
        const sy = toBinaryString(y);
        expect(fromBinaryString(sx)).toEqual(x);
        const c = sign(compareBytes(x, y));
        expect(sx < sy ? -1 : sx > sy ? 1 : 0).toBe(c);
      }),
      { numRuns: 2000 },
    );
    const keys = [b(2), b(1, 0xff), b(), b(1), b(0x80), b(0x7f, 0xff)];
    const byString = keys.map(toBinaryString).sort().map(fromBinaryString);
    const byBytes = [...keys].sort(compareBytes);
    expect(byString).toEqual(byBytes);
  });

  it('distinct byte strings are distinct Map keys', () => {
    const m = new Map<string, number>();
    m.set(toBinaryString(b(1, 2)), 1);
    m.set(toBinaryString(b(1, 2, 0)), 2);
    m.set(toBinaryString(b(0x01, 0x02)), 3);
    expect(m.size).toBe(2);
    expect(m.get(toBinaryString(b(1, 2)))).toBe(3);
  });
});

describe('ByteWriter / ByteReader', () => {
  it('round-trips u8, u32, varints, raw and length-prefixed bytes', () => {
    const w = new ByteWriter(4);
    w.u8(7).u32(0xdeadbeef).varint(0).varint(300).bytes(b(1, 2)).lenBytes(utf8('hello')).lenBytes(EMPTY_BYTES).u32(0);
    const out = w.finish();
    expect(out.length).toBe(w.length);

    const r = new ByteReader(out, corrupt);
    expect(r.u8()).toBe(7);
    expect(r.u32()).toBe(0xdeadbeef);
    expect(r.varint()).toBe(0);
    expect(r.varint()).toBe(300);
    expect(r.bytes(2)).toEqual(b(1, 2));
    expect(fromUtf8(r.lenBytes())).toBe('hello');
    expect(r.lenBytes()).toEqual(EMPTY_BYTES);
    expect(r.u32()).toBe(0);
    expect(r.remaining).toBe(0);
  });

  it('u32 is big-endian', () => {
    expect(new ByteWriter().u32(0x01020304).finish()).toEqual(b(1, 2, 3, 4));
  });

  it('encodes varints as unsigned LEB128', () => {
    const enc = (v: number) => new ByteWriter().varint(v).finish();
    expect(enc(0)).toEqual(b(0));
    expect(enc(127)).toEqual(b(0x7f));
    expect(enc(128)).toEqual(b(0x80, 0x01));
    expect(enc(300)).toEqual(b(0xac, 0x02));
    expect(enc(2 ** 32)).toEqual(b(0x80, 0x80, 0x80, 0x80, 0x10));
    expect(enc(Number.MAX_SAFE_INTEGER)).toEqual(b(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f));
  });

  it('round-trips varints at every size up to 2^53-1', () => {
    const values = [0, 1, 127, 128, 16383, 16384, 2 ** 21 - 1, 2 ** 21, 2 ** 28, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 35, 2 ** 42, 2 ** 49 - 1, 2 ** 49, 2 ** 52, 2 ** 53 - 2, Number.MAX_SAFE_INTEGER];
    const w = new ByteWriter(1);
    for (const v of values) w.varint(v);
    const r = new ByteReader(w.finish(), corrupt);
    for (const v of values) expect(r.varint()).toBe(v);
    expect(r.remaining).toBe(0);

    fc.assert(
      fc.property(fc.array(fc.maxSafeNat(), { maxLength: 20 }), (xs) => {
        const writer = new ByteWriter(2);
        for (const x of xs) writer.varint(x);
        const reader = new ByteReader(writer.finish(), corrupt);
        expect(xs.map(() => reader.varint())).toEqual(xs);
        expect(reader.remaining).toBe(0);
      }),
    );
  });

  it('refuses varints that cannot round-trip', () => {
    const w = new ByteWriter();
    for (const bad of [-1, 0.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY]) {
      let thrown: unknown;
      try {
        w.varint(bad);
      } catch (e) {
        thrown = e;
      }
      expect(isTaqubaError(thrown, 'INVALID_ARGUMENT')).toBe(true);
    }
    expect(w.length).toBe(0);
  });

  it('grows from any initial size, including 0', () => {
    const big = new Uint8Array(10_000).map((_, i) => i & 0xff);
    for (const initial of [0, 1, 3, 256]) {
      const w = new ByteWriter(initial);
      w.u8(1).bytes(big).u32(42).varint(Number.MAX_SAFE_INTEGER);
      const r = new ByteReader(w.finish(), corrupt);
      expect(r.u8()).toBe(1);
      expect(r.bytes(big.length)).toEqual(big);
      expect(r.u32()).toBe(42);
      expect(r.varint()).toBe(Number.MAX_SAFE_INTEGER);
    }
  });

  it('finish() returns a copy that later writes do not change', () => {
    const w = new ByteWriter();
    w.u8(1);
    const first = w.finish();
    w.u8(2);
    expect(first).toEqual(b(1));
    expect(w.finish()).toEqual(b(1, 2));
  });

  it('reads from a subarray view with an offset', () => {
    const framed = concatBytes(b(0xaa, 0xbb), new ByteWriter().u32(77).varint(5).finish(), b(0xcc));
    const r = new ByteReader(framed.subarray(2, framed.length - 1), corrupt);
    expect(r.u32()).toBe(77);
    expect(r.varint()).toBe(5);
    expect(r.remaining).toBe(0);
    const r2 = new ByteReader(framed, corrupt, 2);
    expect(r2.u32()).toBe(77);
  });

  it('calls onError on truncated reads', () => {
    const cases: [Uint8Array, (r: ByteReader) => unknown, string][] = [
      [b(), (r) => r.u8(), 'truncated u8'],
      [b(1, 2, 3), (r) => r.u32(), 'truncated u32'],
      [b(), (r) => r.varint(), 'truncated varint'],
      [b(0x80, 0x80), (r) => r.varint(), 'truncated varint'],
      [b(1, 2), (r) => r.bytes(3), 'truncated bytes'],
      [b(5, 1, 2), (r) => r.lenBytes(), 'truncated bytes'],
    ];
    for (const [buf, read, what] of cases) {
      const seen: string[] = [];
      const r = new ByteReader(buf, (w) => {
        seen.push(w);
        return corrupt(w);
      });
      expect(() => read(r)).toThrow(CorruptDataError);
      expect(seen).toEqual([what]);
    }
  });

  it('calls onError on over-long or out-of-range varints', () => {
    const whats: string[] = [];
    const onError = (w: string) => {
      whats.push(w);
      return corrupt(w);
    };
    expect(() => new ByteReader(new Uint8Array(9).fill(0x80), onError).varint()).toThrow(CorruptDataError);
    // 8 bytes, but the value is 2^53: beyond what a number holds exactly.
    expect(() => new ByteReader(b(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10), onError).varint()).toThrow(CorruptDataError);
    expect(whats).toEqual(['varint too long', 'varint out of range']);
  });
});
