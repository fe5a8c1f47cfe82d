/**
 * Values in error messages: short, printable, never the whole value (a payload may be megabytes,
 * a key may be binary). Used by every layer's input checks.
 */
import { toHex } from './bytes.js';

// Control characters would make a key unprintable in messages and logs.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Shortens a value for a message: strings quoted and cut at 80 characters, bytes as their length. */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (value instanceof Uint8Array) return `bytes(${value.length})`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return Object.prototype.toString.call(value);
}

/** A key for messages: UTF-8 text when printable, else hex. */
export function showKey(key: Uint8Array): string {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(key);
    if (!CONTROL.test(text)) return show(text);
  } catch {
    // not UTF-8
  }
  return `0x${toHex(key)}`;
}
