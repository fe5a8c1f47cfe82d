import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { isTaqubaError } from '../../../src/core/errors.js';
import { MAX_OBJECT_KEY_LENGTH, validateGetRange, validateListPrefix, validateObjectKey, validatePutData } from '../../../src/core/objects/index.js';

function codeOf(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    return isTaqubaError(e) ? e.code : 'not a library error';
  }
}

describe('validateObjectKey', () => {
  it('accepts ordinary keys, including dots inside segments and unicode', () => {
    for (const key of ['a', 'db/wal/00000001.wal', '.hidden/x', 'a/..b', '日本/😀', 'x'.repeat(MAX_OBJECT_KEY_LENGTH)]) {
      expect(codeOf(() => validateObjectKey(key))).toBeUndefined();
    }
  });

  it('rejects empty, absolute, dot-segment, doubled-slash, NUL, backslash, too-long and lone-surrogate keys', () => {
    for (const key of ['', '/a', 'a/', 'a//b', '.', 'a/./b', 'a/..', 'a\0b', 'a\\b', 'x'.repeat(MAX_OBJECT_KEY_LENGTH + 1), 'a\ud800', '\udc00b']) {
      expect(codeOf(() => validateObjectKey(key))).toBe('INVALID_ARGUMENT');
    }
  });

  it('quotes the key in the message so control characters are visible', () => {
    expect(() => validateObjectKey('a\0b')).toThrow('key="a\\u0000b"');
  });
});

describe('validateListPrefix', () => {
  it('accepts the empty prefix, directory prefixes and partial segments', () => {
    for (const prefix of ['', 'a/', 'a/b', 'db/wal/0001']) expect(codeOf(() => validateListPrefix(prefix))).toBeUndefined();
  });

  it('rejects prefixes that break the key rules', () => {
    for (const prefix of ['/', '/a', 'a//', 'a/../']) expect(codeOf(() => validateListPrefix(prefix))).toBe('INVALID_ARGUMENT');
  });
});

describe('validateGetRange', () => {
  it('accepts no range and non-negative integer ranges', () => {
    for (const range of [undefined, { offset: 0, length: 0 }, { offset: 10, length: 2 ** 40 }]) {
      expect(codeOf(() => validateGetRange('k', range))).toBeUndefined();
    }
  });

  it('rejects negative, fractional and non-finite offsets and lengths', () => {
    for (const range of [{ offset: -1, length: 1 }, { offset: 0, length: -1 }, { offset: 1.5, length: 1 }, { offset: 0, length: Infinity }, { offset: NaN, length: 1 }]) {
      expect(codeOf(() => validateGetRange('k', range))).toBe('INVALID_ARGUMENT');
    }
  });
});

describe('validatePutData', () => {
  it('accepts a Uint8Array, a subarray, a Node Buffer and a Uint8Array of another realm', () => {
    const other = runInNewContext('new Uint8Array([1, 2])') as unknown;
    for (const data of [new Uint8Array(0), new Uint8Array(8).subarray(2, 4), Buffer.from('x'), other]) {
      expect(codeOf(() => validatePutData('k', data))).toBeUndefined();
    }
  });

  it('rejects other views, look-alikes and primitives with INVALID_ARGUMENT naming the key and the type', () => {
    const lookAlike = { length: 1, 0: 7, [Symbol.toStringTag]: 'Uint8Array' };
    const cases: [unknown, string][] = [
      [new Uint8ClampedArray(1), 'Uint8ClampedArray'],
      [new Int8Array(1), 'Int8Array'],
      [new ArrayBuffer(1), 'ArrayBuffer'],
      [lookAlike, 'Uint8Array'], // says it is one; the brand check is not fooled
      [{}, 'Object'],
      [7n, 'bigint'],
    ];
    for (const [data, got] of cases) {
      try {
        validatePutData('a/b', data);
        expect.unreachable(`accepted ${got}`);
      } catch (e) {
        expect(isTaqubaError(e, 'INVALID_ARGUMENT')).toBe(true);
        expect((e as Error).message).toBe(`put data must be a Uint8Array. key=a/b got=${got}`);
        expect((e as { details: unknown }).details).toEqual({ key: 'a/b', got });
      }
    }
  });
});
