/**
 * A small MessagePack writer for the job record's fast path: exactly the forms the generic encoder
 * (`core/codec.ts`) chooses for ASCII strings, bytes and numbers, so both write the same bytes.
 * Each writer owns its buffer; callers size it exactly with `strSize`, `binSize` and `numSize`,
 * and it grows only if they fall short.
 */

/** Bytes of a string of `n` ASCII characters, header included. */
export function strSize(n: number): number {
  return n < 32 ? 1 + n : n < 0x100 ? 2 + n : n < 0x10000 ? 3 + n : 5 + n;
}

/** Bytes of a bin of `n` bytes, header included. */
export function binSize(n: number): number {
  return n < 0x100 ? 2 + n : n < 0x10000 ? 3 + n : 5 + n;
}

/** Bytes `MsgpackWriter.number` writes for `v`. */
export function numSize(v: number): number {
  if (!Number.isSafeInteger(v)) return 9;
  if (v >= 0) return v < 0x80 ? 1 : v < 0x100 ? 2 : v < 0x10000 ? 3 : v < 0x100000000 ? 5 : 9;
  return v >= -0x20 ? 1 : v >= -0x80 ? 2 : v >= -0x8000 ? 3 : v >= -0x80000000 ? 5 : 9;
}

/** Writes one value into a buffer of its own (big-endian, as MessagePack). */
export class MsgpackWriter {
  private buf: Uint8Array;
  private view: DataView | undefined;
  private pos = 0;

  constructor(capacity: number) {
    this.buf = new Uint8Array(capacity);
  }

  /** The bytes written, in a buffer of their exact length. */
  finish(): Uint8Array {
    return this.pos === this.buf.length ? this.buf : this.buf.slice(0, this.pos);
  }

  private ensure(extra: number): void {
    const needed = this.pos + extra;
    if (needed <= this.buf.length) return;
    let size = Math.max(this.buf.length * 2, 64);
    while (size < needed) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = undefined;
  }

  private u16At(o: number, v: number): void {
    this.buf[o] = v >>> 8;
    this.buf[o + 1] = v & 0xff;
  }

  /** Four bytes of `v` taken as a 32-bit two's-complement or unsigned integer. */
  private u32At(o: number, v: number): void {
    const b = this.buf;
    b[o] = v >>> 24;
    b[o + 1] = (v >>> 16) & 0xff;
    b[o + 2] = (v >>> 8) & 0xff;
    b[o + 3] = v & 0xff;
  }

  mapHeader(count: number): void {
    this.ensure(3);
    if (count < 16) this.buf[this.pos++] = 0x80 + count;
    else {
      this.buf[this.pos] = 0xde;
      this.u16At(this.pos + 1, count);
      this.pos += 3;
    }
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    const b = this.buf;
    const o = this.pos;
    if (bytes.length < 24) {
      for (let i = 0; i < bytes.length; i++) b[o + i] = bytes[i];
    } else b.set(bytes, o);
    this.pos = o + bytes.length;
  }

  /** Writes an ASCII string; false (nothing usable written) when it has another character. */
  ascii(s: string): boolean {
    const n = s.length;
    this.ensure(strSize(n));
    const b = this.buf;
    let o = this.pos;
    if (n < 32) b[o++] = 0xa0 + n;
    else if (n < 0x100) {
      b[o++] = 0xd9;
      b[o++] = n;
    } else if (n < 0x10000) {
      b[o++] = 0xda;
      this.u16At(o, n);
      o += 2;
    } else {
      b[o++] = 0xdb;
      this.u32At(o, n);
      o += 4;
    }
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return false;
      b[o++] = c;
    }
    this.pos = o;
    return true;
  }

  bin(bytes: Uint8Array): void {
    const n = bytes.length;
    this.ensure(binSize(n));
    const b = this.buf;
    if (n < 0x100) {
      b[this.pos++] = 0xc4;
      b[this.pos++] = n;
    } else if (n < 0x10000) {
      b[this.pos] = 0xc5;
      this.u16At(this.pos + 1, n);
      this.pos += 3;
    } else {
      b[this.pos] = 0xc6;
      this.u32At(this.pos + 1, n);
      this.pos += 5;
    }
    this.raw(bytes);
  }

  /** The generic encoder's number forms: the smallest integer encoding, else float64. */
  number(v: number): void {
    this.ensure(numSize(v));
    const b = this.buf;
    const o = this.pos;
    if (Number.isSafeInteger(v)) {
      if (v >= 0) {
        if (v < 0x80) {
          b[o] = v;
          this.pos = o + 1;
        } else if (v < 0x100) {
          b[o] = 0xcc;
          b[o + 1] = v;
          this.pos = o + 2;
        } else if (v < 0x10000) {
          b[o] = 0xcd;
          this.u16At(o + 1, v);
          this.pos = o + 3;
        } else if (v < 0x100000000) {
          b[o] = 0xce;
          this.u32At(o + 1, v);
          this.pos = o + 5;
        } else {
          b[o] = 0xcf;
          const hi = Math.floor(v / 0x100000000);
          this.u32At(o + 1, hi);
          this.u32At(o + 5, v - hi * 0x100000000);
          this.pos = o + 9;
        }
        return;
      }
      if (v >= -0x20) {
        b[o] = 0xe0 | (v + 0x20);
        this.pos = o + 1;
      } else if (v >= -0x80) {
        b[o] = 0xd0;
        b[o + 1] = v & 0xff;
        this.pos = o + 2;
      } else if (v >= -0x8000) {
        b[o] = 0xd1;
        this.u16At(o + 1, v & 0xffff);
        this.pos = o + 3;
      } else if (v >= -0x80000000) {
        b[o] = 0xd2;
        this.u32At(o + 1, v);
        this.pos = o + 5;
      } else {
        b[o] = 0xd3;
        const hi = Math.floor(v / 0x100000000);
        this.u32At(o + 1, hi);
        this.u32At(o + 5, v - hi * 0x100000000);
        this.pos = o + 9;
      }
      return;
    }
    b[o] = 0xcb;
    this.view ??= new DataView(b.buffer, b.byteOffset, b.byteLength);
    this.view.setFloat64(o + 1, v);
    this.pos = o + 9;
  }
}
