/**
 * Human output helpers: colour (only on a TTY, `NO_COLOR` and `FORCE_COLOR` respected), relative
 * times, aligned tables, and byte values shown as text when they are text.
 */
import pc from 'picocolors';
import { decodeValue } from '../core/codec.js';

export type Colors = ReturnType<typeof pc.createColors>;

/** FORCE_COLOR (not `0`/`false`) turns colour on, NO_COLOR (non-empty) off, else a TTY that is not `dumb`. */
export function colorEnabled(env: NodeJS.ProcessEnv, isTty: boolean): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '' && force !== '0' && force !== 'false') return true;
  if (force === '0' || force === 'false') return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return isTty && env.TERM !== 'dumb';
}

export const makeColors = (enabled: boolean): Colors => pc.createColors(enabled);

const UNITS: readonly [number, string][] = [
  [24 * 3600_000, 'd'],
  [3600_000, 'h'],
  [60_000, 'min'],
  [1000, 's'],
];

/** A duration in its largest whole unit: `850 ms`, `3 s`, `2 min`, `5 h`, `1 d`. */
export function duration(ms: number): string {
  const abs = Math.abs(ms);
  for (const [size, unit] of UNITS) if (abs >= size) return `${Math.floor(abs / size)} ${unit}`;
  return `${Math.round(abs)} ms`;
}

/** `3 s ago`, `in 2 min`, `now` (within a second). */
export function relativeTime(atMs: number, nowMs: number): string {
  const delta = atMs - nowMs;
  if (Math.abs(delta) < 1000) return 'now';
  return delta < 0 ? `${duration(delta)} ago` : `in ${duration(delta)}`;
}

// Escape sequences do not take up columns.
const ANSI = /\u001b\[[0-9;]*m/g;
const width = (s: string): number => s.replace(ANSI, '').length;

/** Rows aligned in columns (two spaces apart), a header row first; the last column is not padded. */
export function table(header: readonly string[], rows: readonly (readonly string[])[], colors: Colors): string {
  const all = [header.map((h) => colors.bold(h)), ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => width(r[i] ?? ''))));
  return all.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell + ' '.repeat(widths[i] - width(cell)))).join('  ').trimEnd()).join('\n');
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;

/** The bytes as text when they are UTF-8 without control characters, else undefined. */
export function bytesText(bytes: Uint8Array): string | undefined {
  try {
    const text = strictUtf8.decode(bytes);
    return CONTROL.test(text) ? undefined : text;
  } catch {
    return undefined;
  }
}

/** A short display of a byte value: its text (quoted, cut at `max`), else its size. */
export function showBytes(bytes: Uint8Array, max = 60): string {
  const text = bytesText(bytes);
  if (text === undefined) return `<${bytes.length} bytes>`;
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return JSON.stringify(cut);
}

/** JSON for a decoded value: bytes as their size, BigInt as text, Map and Set as arrays (JSON has no such types). */
export function valueJson(value: unknown): string {
  if (value === undefined) return 'undefined';
  const plain = (_key: string, v: unknown): unknown => {
    if (v instanceof Uint8Array) return `<${v.byteLength} bytes>`;
    if (typeof v === 'bigint') return `${v}n`;
    if (v instanceof Map) return [...v];
    if (v instanceof Set) return [...v];
    return v;
  };
  return JSON.stringify(value, plain) ?? String(value);
}

/**
 * A short display of a value in the value codec's encoding (a workflow function's step result or
 * signal value): its JSON, cut at `max`; bytes that do not decode as one, as `showBytes`.
 */
export function showValue(bytes: Uint8Array, max = 60): string {
  let value: unknown;
  try {
    value = decodeValue(bytes);
  } catch {
    return showBytes(bytes, max);
  }
  // One line: JSON escapes the line breaks inside strings.
  const text = valueJson(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
