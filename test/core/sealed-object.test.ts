import { describe, expect, it } from 'vitest';
import { equalBytes } from '../../src/core/bytes.js';
import { isTaqubaError } from '../../src/core/errors.js';
import { openSealedObject, sealObject, SEALED_HEADER_BYTES, SEALED_OVERHEAD_BYTES, type SealedObjectKind } from '../../src/core/sealed-object.js';

const KIND: SealedObjectKind = { magic: 0x54515453, version: 1 }; // "TQTS"
const OTHER: SealedObjectKind = { magic: 0x5451544f, version: 1 }; // "TQTO"
const body = new Uint8Array([1, 2, 3, 4, 5, 6, 7]);

/** The CORRUPT_DATA error `fn` throws (fails the test when it throws nothing or something else). */
function corruption(fn: () => unknown): { message: string; details: Record<string, unknown> } {
  try {
    fn();
  } catch (e) {
    if (!isTaqubaError(e, 'CORRUPT_DATA')) throw e;
    return { message: e.message, details: e.details };
  }
  throw new Error('expected CORRUPT_DATA, nothing was thrown');
}

describe('sealed objects', () => {
  it('round-trips bodies of any size, including empty, with the documented layout', () => {
    for (const b of [new Uint8Array(0), body, new Uint8Array(300 * 1024).map((_, i) => i * 31)]) {
      const sealed = sealObject(KIND, b);
      expect(sealed.length).toBe(b.length + SEALED_OVERHEAD_BYTES);
      // equalBytes, not toEqual: a deep diff of 300 KiB takes seconds.
      expect(equalBytes(openSealedObject(KIND, sealed, 'obj'), b)).toBe(true);
    }
    const sealed = sealObject(KIND, body);
    const view = new DataView(sealed.buffer);
    expect(view.getUint32(0)).toBe(KIND.magic);
    expect(view.getUint8(4)).toBe(KIND.version);
    expect(view.getUint32(5)).toBe(body.length);
    expect(sealed.subarray(SEALED_HEADER_BYTES, SEALED_HEADER_BYTES + body.length)).toEqual(body);
  });

  it('opens into a view of the stored bytes, without copying the body', () => {
    const sealed = sealObject(KIND, body);
    const opened = openSealedObject(KIND, sealed, 'obj');
    expect(opened.buffer).toBe(sealed.buffer);
    expect(opened.byteOffset).toBe(SEALED_HEADER_BYTES);
  });

  it('opens an object that sits at an offset inside a larger buffer', () => {
    const sealed = sealObject(KIND, body);
    const outer = new Uint8Array(sealed.length + 10);
    outer.set(sealed, 5);
    expect(openSealedObject(KIND, outer.subarray(5, 5 + sealed.length), 'obj')).toEqual(body);
  });

  it('every single flipped byte is CORRUPT_DATA naming the object', () => {
    const sealed = sealObject(KIND, body);
    for (let i = 0; i < sealed.length; i++) {
      for (const mask of [0x01, 0x80, 0xff]) {
        const bad = sealed.slice();
        bad[i] ^= mask;
        const e = corruption(() => openSealedObject(KIND, bad, 'memo/run/1/abc'));
        expect(e.details.object).toBe('memo/run/1/abc');
        expect(e.message).toMatch(/^corrupt object\. object=memo\/run\/1\/abc problem=/);
        // Bytes 5..8 hold the length: a flip there is caught as a length mismatch, elsewhere by the checksum.
        expect(e.details.problem).toBe(i >= 5 && i < 9 ? 'length mismatch' : 'checksum mismatch');
      }
    }
  });

  it('every truncation, an extension and an empty object are CORRUPT_DATA', () => {
    const sealed = sealObject(KIND, body);
    for (let n = 1; n < sealed.length; n++) {
      const e = corruption(() => openSealedObject(KIND, sealed.subarray(0, n), 'p/1'));
      expect(e.details).toMatchObject({ object: 'p/1', problem: n < SEALED_OVERHEAD_BYTES ? 'shorter than a frame' : 'length mismatch' });
    }
    const longer = new Uint8Array(sealed.length + 1);
    longer.set(sealed);
    expect(corruption(() => openSealedObject(KIND, longer, 'p/1')).details).toMatchObject({ problem: 'length mismatch', body_length: body.length, size: longer.length });
    const empty = corruption(() => openSealedObject(KIND, new Uint8Array(0), 'p/1'));
    expect(empty.details).toEqual({ object: 'p/1', problem: 'empty' });
    expect(empty.message).toBe('corrupt object. object=p/1 problem=empty');
  });

  it('an intact object of another kind or version is rejected by its magic or version', () => {
    const other = sealObject(OTHER, body);
    const e = corruption(() => openSealedObject(KIND, other, 'k'));
    expect(e.details).toMatchObject({ object: 'k', problem: 'wrong magic', magic: '0x5451544f', expected: '0x54515453' });
    expect(e.message).toBe('corrupt object. object=k problem=wrong magic magic=0x5451544f expected=0x54515453');
    const v2 = sealObject({ magic: KIND.magic, version: 2 }, body);
    expect(corruption(() => openSealedObject(KIND, v2, 'k')).details).toMatchObject({ problem: 'unsupported version', version: 2, expected: 1 });
  });

  it('raw unframed bytes (the old layout) are never returned', () => {
    for (const raw of [body, new Uint8Array(100).fill(7), new Uint8Array(SEALED_OVERHEAD_BYTES)]) {
      expect(corruption(() => openSealedObject(KIND, raw, 'old')).details.object).toBe('old');
    }
  });

  it('rejects a kind that does not fit the header with INVALID_ARGUMENT', () => {
    expect(() => sealObject({ magic: 2 ** 32, version: 1 }, body)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => sealObject({ magic: 1, version: 256 }, body)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});
