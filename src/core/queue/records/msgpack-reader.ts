/**
 * A small MessagePack reader for the job record's fast path: the forms the records use (maps,
 * ASCII strings, bytes, numbers, booleans, nil). Anything else throws `BAIL` and the caller falls
 * back to the generic decoder (`core/codec.ts`). Each reader owns its cursor.
 */

/** Thrown by the reader to give up; the caller then decides (the job record codec falls back to the generic decoder). */
export const BAIL = Symbol('bail');

/** Reads MessagePack from the front of a buffer; every method throws BAIL on what it does not expect. */
export class MsgpackReader {
  pos = 0;
  private view: DataView | undefined;

  constructor(readonly buf: Uint8Array) {}

  get done(): boolean {
    return this.pos === this.buf.length;
  }

  need(n: number): void {
    if (this.pos + n > this.buf.length) throw BAIL;
  }

  private u16(): number {
    this.need(2);
    const b = this.buf;
    const o = this.pos;
    this.pos = o + 2;
    return (b[o] << 8) | b[o + 1];
  }

  private u32(): number {
    this.need(4);
    const b = this.buf;
    const o = this.pos;
    this.pos = o + 4;
    return b[o] * 0x1000000 + ((b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]);
  }

  private i32(): number {
    this.need(4);
    const b = this.buf;
    const o = this.pos;
    this.pos = o + 4;
    return (b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3];
  }

  private dataView(): DataView {
    return (this.view ??= new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength));
  }

  /** An ASCII string of `n` bytes at the cursor (non-ASCII ⇒ bail). */
  private asciiAt(n: number): string {
    this.need(n);
    const b = this.buf;
    const start = this.pos;
    const end = start + n;
    for (let i = start; i < end; i++) if (b[i] >= 0x80) throw BAIL;
    this.pos = end;
    if (n === 0) return '';
    return String.fromCharCode.apply(null, b.subarray(start, end) as unknown as number[]);
  }

  /** A string value, or undefined for nil. */
  str(): string | undefined {
    this.need(1);
    const h = this.buf[this.pos++];
    if (h >= 0xa0 && h <= 0xbf) return this.asciiAt(h - 0xa0);
    if (h === 0xd9) {
      this.need(1);
      return this.asciiAt(this.buf[this.pos++]);
    }
    if (h === 0xda) return this.asciiAt(this.u16());
    if (h === 0xdb) return this.asciiAt(this.u32());
    if (h === 0xc0) return undefined;
    throw BAIL;
  }

  /** A bin value (a view, as the generic decoder returns), or undefined for nil. */
  bin(): Uint8Array | undefined {
    this.need(1);
    const h = this.buf[this.pos++];
    let n: number;
    if (h === 0xc4) {
      this.need(1);
      n = this.buf[this.pos++];
    } else if (h === 0xc5) n = this.u16();
    else if (h === 0xc6) n = this.u32();
    else if (h === 0xc0) return undefined;
    else throw BAIL;
    this.need(n);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** A number value, or undefined for nil. */
  num(): number | undefined {
    this.need(1);
    const h = this.buf[this.pos++];
    if (h < 0x80) return h;
    if (h >= 0xe0) return h - 0x100;
    switch (h) {
      case 0xcc:
        this.need(1);
        return this.buf[this.pos++];
      case 0xcd:
        return this.u16();
      case 0xce:
        return this.u32();
      case 0xcf: {
        const hi = this.u32();
        return hi * 0x100000000 + this.u32();
      }
      case 0xd0: {
        this.need(1);
        const v = this.buf[this.pos++];
        return v >= 0x80 ? v - 0x100 : v;
      }
      case 0xd1: {
        const v = this.u16();
        return v >= 0x8000 ? v - 0x10000 : v;
      }
      case 0xd2:
        return this.i32();
      case 0xd3: {
        const hi = this.i32();
        return hi * 0x100000000 + this.u32();
      }
      case 0xca: {
        this.need(4);
        const v = this.dataView().getFloat32(this.pos);
        this.pos += 4;
        return v;
      }
      case 0xcb: {
        this.need(8);
        const v = this.dataView().getFloat64(this.pos);
        this.pos += 8;
        return v;
      }
      case 0xc0:
        return undefined;
      default:
        throw BAIL;
    }
  }

  /** A boolean value, with nil read as false. */
  bool(): boolean {
    this.need(1);
    const b = this.buf[this.pos++];
    if (b === 0xc3) return true;
    if (b === 0xc2 || b === 0xc0) return false;
    throw BAIL;
  }

  /** True (and the cursor past it) when the next value is nil. */
  nil(): boolean {
    this.need(1);
    if (this.buf[this.pos] !== 0xc0) return false;
    this.pos++;
    return true;
  }

  mapHeader(): number {
    this.need(1);
    const h = this.buf[this.pos++];
    if (h >= 0x80 && h <= 0x8f) return h - 0x80;
    if (h === 0xde) return this.u16();
    throw BAIL;
  }

  /** True when the fixstr key of `n` bytes at `start` equals `name` (its bytes after the header). */
  keyIs(name: Uint8Array, start: number, n: number): boolean {
    if (name.length !== n + 1) return false;
    const b = this.buf;
    for (let i = 0; i < n; i++) if (b[start + i] !== name[i + 1]) return false;
    return true;
  }
}
