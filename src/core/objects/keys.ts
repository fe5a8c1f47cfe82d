import { InvalidArgumentError, InvalidConfigError } from '../errors.js';
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

// The getter behind every typed array's toStringTag returns its internal type name (undefined for
// anything else), so this is a brand check: it holds across realms and a Node Buffer passes (it is
// a Uint8Array), while a look-alike object or another view type cannot.
const typedArrayName = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype) as object, Symbol.toStringTag)!.get!;

/** What a value is, for messages: `null`, `undefined`, a primitive's type, or an object's tag (`ArrayBuffer`, `Array`). */
function describeData(data: unknown): string {
  if (data === null) return 'null';
  if (typeof data !== 'object' && typeof data !== 'function') return typeof data;
  try {
    return Object.prototype.toString.call(data).slice(8, -1);
  } catch {
    return 'object'; // a revoked proxy, or a throwing toStringTag getter
  }
}

/**
 * Checks the bytes of a put, or (`op: 'append'`) of an append to an append log: they must be a
 * `Uint8Array` (a Node `Buffer` is one). Every adapter and wrapper calls this before writing
 * anything, so an `ArrayBuffer`, a `DataView`, another typed array, a string or a number can
 * never be stored as zero bytes, as half its bytes, as text, or fail as an I/O error.
 *
 * @throws InvalidArgumentError (INVALID_ARGUMENT) naming the operation, the key and what was
 *   given (`details.key`, `details.got`).
 */
export function validatePutData(key: string, data: unknown, op: 'put' | 'append' = 'put'): asserts data is Uint8Array {
  if (typedArrayName.call(data) === 'Uint8Array') return;
  const got = describeData(data);
  throw new InvalidArgumentError(`${op} data must be a Uint8Array. key=${key} got=${got}`, { key, got });
}

/** The rule of {@link validateKeyPrefixOption}, as its errors state it. */
export const KEY_PREFIX_RULE =
  "must be an object-key prefix: '/'-separated segments, none of them empty, '.' or '..', without a leading or trailing '/', NUL, backslash or lone surrogate";

/**
 * Checks an open-time option that names where objects go (a queue path, a payload path, a memo
 * prefix): it must itself be a valid object key ({@link validateObjectKey}), to which the library
 * appends `/<name>`. Checking at open means a bad value fails there, not at the first write under
 * it, and a value like `../escape` can never reach an adapter (the filesystem store maps keys to
 * paths).
 *
 * @throws InvalidConfigError (INVALID_CONFIG) naming the option, its value (JSON-quoted) and the
 *   rule (`details.option`, `details.value`).
 */
export function validateKeyPrefixOption(option: string, value: unknown): asserts value is string {
  try {
    if (typeof value !== 'string') throw new TypeError('not a string');
    validateObjectKey(value);
  } catch {
    const shown = typeof value === 'string' ? JSON.stringify(value) : describeData(value);
    throw new InvalidConfigError(`${option} ${KEY_PREFIX_RULE}. ${option}=${shown}`, { option, value: shown });
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
