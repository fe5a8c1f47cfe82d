import { describe, expect, it } from 'vitest';
import { isTaqubaError } from '../../../src/core/errors.js';
import { MAX_OBJECT_KEY_LENGTH, validateGetRange, validateListPrefix, validateObjectKey } from '../../../src/core/objects/index.js';

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
