/** Byte helpers shared by every layer: ordering, text, and a small binary writer/reader. */
import { InvalidArgumentError } from './errors.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export const EMPTY_BYTES = new Uint8Array(0);

/** Strings up to this length try the ASCII loop below first. */
const SHORT_TEXT = 128;

export function utf8(text: string): Uint8Array {
  // Keys and names are short and nearly always ASCII; for those a plain loop is about 5x faster
  // than TextEncoder, whose per-call overhead dominates (measured in Node 20, 30-char strings).
  const n = text.length;
  if (n > SHORT_TEXT) return encoder.encode(text);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return encoder.encode(text);
    out[i] = c;
  }
  return out;
}

export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** Lexicographic byte order, the order of every key in the engine. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a[i] - b[i];
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/**
 * The smallest key greater than every key that starts with `prefix`, or undefined when no such
 * key exists (the prefix is empty or all 0xff).
 */
export function prefixEnd(prefix: Uint8Array): Uint8Array | undefined {
  const end = prefix.slice();
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] !== 0xff) {
      end[i]++;
      // slice, not subarray: the result must not drag the dropped 0xff tail along in its buffer.
      return end.slice(0, i + 1);
    }
  }
  return undefined;
}

/**
 * A string whose UTF-16 code units are the bytes, one per unit. Comparing two such strings with
 * `<` gives byte order, and they hash well as Map keys.
 */
export function toBinaryString(bytes: Uint8Array): string {
  // One native call for keys (the common case); chunked so huge inputs stay under the engine's
  // argument-count limit.
  if (bytes.length <= 4096) return String.fromCharCode.apply(null, bytes as unknown as number[]);
  let s = '';
  for (let i = 0; i < bytes.length; i += 4096) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 4096) as unknown as number[]);
  return s;
}

export function fromBinaryString(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** Two lower-case hex digits per byte value. */
const HEX_DIGITS: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** The two lower-case hex digits of one byte (0..255). */
export function hexByte(byte: number): string {
  return HEX_DIGITS[byte];
}

/** Lower-case hex, two digits per byte: the one hex encoder (versions, ids, escaped names). */
export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += HEX_DIGITS[bytes[i]];
  return s;
}

/** The bytes of lower-case or upper-case hex (`toHex`'s inverse); an odd length or a non-hex digit throws a RangeError. */
export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new RangeError(`not hex: ${hex.slice(0, 32)}`);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Grows as needed; varints are unsigned LEB128 of safe integers (0 ..= 2^53-1, at most 8 bytes). */
export class ByteWriter {
  private buf: Uint8Array;
  length = 0;

  constructor(initial = 256) {
    this.buf = new Uint8Array(initial);
  }

  private ensure(extra: number): void {
    if (this.length + extra <= this.buf.length) return;
    let size = Math.max(16, this.buf.length * 2);
    while (size < this.length + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  u8(v: number): this {
    this.ensure(1);
    this.buf[this.length++] = v;
    return this;
  }

  u32(v: number): this {
    this.ensure(4);
    const b = this.buf;
    const o = this.length;
    b[o] = v >>> 24;
    b[o + 1] = (v >>> 16) & 0xff;
    b[o + 2] = (v >>> 8) & 0xff;
    b[o + 3] = v & 0xff;
    this.length += 4;
    return this;
  }

  varint(v: number): this {
    if (!Number.isSafeInteger(v) || v < 0) {
      throw new InvalidArgumentError(`varint must be a non-negative safe integer. value=${v}`, { value: v });
    }
    this.ensure(8);
    while (v >= 0x80) {
      this.buf[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.length++] = v;
    return this;
  }

  bytes(b: Uint8Array): this {
    this.ensure(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
    return this;
  }

  /** Length-prefixed bytes. */
  lenBytes(b: Uint8Array): this {
    return this.varint(b.length).bytes(b);
  }

  /** The bytes written so far, without copying (valid until the next write). */
  written(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

/** Reads what ByteWriter wrote; `onError` builds the error thrown on a short or malformed read. */
export class ByteReader {
  offset: number;
  private readonly view: DataView;

  constructor(
    readonly buf: Uint8Array,
    private readonly onError: (what: string) => Error,
    offset = 0,
  ) {
    this.offset = offset;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  get remaining(): number {
    return this.buf.length - this.offset;
  }

  private need(n: number, what: string): void {
    if (this.offset + n > this.buf.length) throw this.onError(`truncated ${what}`);
  }

  u8(): number {
    this.need(1, 'u8');
    return this.buf[this.offset++];
  }

  u32(): number {
    this.need(4, 'u32');
    const v = this.view.getUint32(this.offset);
    this.offset += 4;
    return v;
  }

  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      this.need(1, 'varint');
      const b = this.buf[this.offset++];
      result += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (result > Number.MAX_SAFE_INTEGER) throw this.onError('varint out of range');
        return result;
      }
      scale *= 0x80;
    }
    throw this.onError('varint too long');
  }

  bytes(n: number): Uint8Array {
    this.need(n, 'bytes');
    const out = this.buf.subarray(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }

  lenBytes(): Uint8Array {
    return this.bytes(this.varint());
  }
}
