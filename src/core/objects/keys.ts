import { InvalidArgumentError } from '../errors.js';
import type { GetOptions } from './object-store.js';

/** The longest key any adapter accepts (S3's limit is 1024 bytes of UTF-8; we count code units). */
export const MAX_OBJECT_KEY_LENGTH = 1024;

// A lone surrogate has no UTF-8 form, so S3 and the filesystem could not store the key faithfully.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Checks an object key: a non-empty string of '/'-separated segments that are not empty, `.` or
 * `..`, with no leading slash, no NUL or backslash and no lone surrogate. Every adapter calls this
 * so a key means the same thing everywhere (and can never escape a filesystem root).
 *
 * @throws InvalidArgumentError (INVALID_ARGUMENT) naming the key (JSON-quoted, so odd characters
 *   are visible) in the message and in `details.key`.
 */
export function validateObjectKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) {
    throw new InvalidArgumentError(`object key must be a non-empty string. key=${JSON.stringify(String(key))}`, { key: String(key) });
  }
  if (key.length > MAX_OBJECT_KEY_LENGTH) {
    throw new InvalidArgumentError(`object key too long. length=${key.length} max=${MAX_OBJECT_KEY_LENGTH}`, { length: key.length });
  }
  if (key.includes('\0') || key.includes('\\')) {
    throw new InvalidArgumentError(`object key contains NUL or backslash. key=${JSON.stringify(key)}`, { key });
  }
  if (LONE_SURROGATE.test(key)) {
    throw new InvalidArgumentError(`object key is not well-formed unicode. key=${JSON.stringify(key)}`, { key });
  }
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') {
      throw new InvalidArgumentError(`object key has an empty, '.' or '..' segment. key=${JSON.stringify(key)}`, { key });
    }
  }
}

/**
 * A list prefix is a plain string prefix of keys, not necessarily a directory: it may be empty
 * or end in '/'; otherwise it follows the key rules.
 *
 * @throws InvalidArgumentError (INVALID_ARGUMENT) naming the prefix.
 */
export function validateListPrefix(prefix: string): void {
  if (prefix === '') return;
  validateObjectKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
}

/**
 * Checks a ranged get: offset and length must be non-negative safe integers. Without this a
 * negative offset would silently read from the end in one adapter and fail in another.
 *
 * @throws InvalidArgumentError (INVALID_ARGUMENT) naming the key and the range.
 */
export function validateGetRange(key: string, range: GetOptions['range']): void {
  if (range === undefined) return;
  const { offset, length } = range;
  if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length < 0) {
    throw new InvalidArgumentError(`invalid range. key=${JSON.stringify(key)} offset=${offset} length=${length}`, {
      key,
      offset: String(offset),
      length: String(length),
    });
  }
}
