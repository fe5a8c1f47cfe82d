import { InvalidArgumentError } from '../errors.js';

/**
 * Checks an object key: non-empty, '/'-separated segments that are not empty, `.` or `..`, no
 * leading slash, no NUL or backslash. Every adapter calls this so a key means the same thing
 * everywhere (and can never escape a filesystem root).
 */
export function validateObjectKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) {
    throw new InvalidArgumentError(`object key must be a non-empty string. key=${String(key)}`, { key: String(key) });
  }
  if (key.length > 1024) {
    throw new InvalidArgumentError(`object key longer than 1024 characters. length=${key.length}`, { length: key.length });
  }
  if (key.includes('\0') || key.includes('\\')) {
    throw new InvalidArgumentError(`object key contains NUL or backslash. key=${JSON.stringify(key)}`, { key });
  }
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') {
      throw new InvalidArgumentError(`object key has an empty, '.' or '..' segment. key=${JSON.stringify(key)}`, { key });
    }
  }
}

/** A list prefix may be empty or end in '/'; otherwise it follows the key rules. */
export function validateListPrefix(prefix: string): void {
  if (prefix === '') return;
  validateObjectKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
}
