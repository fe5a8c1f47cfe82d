/**
 * How the inspector turns stored bytes and times into text a person reads: a KV or memo value
 * as JSON, text or MessagePack when it decodes as one of them (hex otherwise), a time as a clock
 * time plus how long ago. Pure functions, no DOM.
 */
import { decodeValue } from '../../core/codec.js';
import type { ScheduleTargetInfo } from '../../core/cron/index.js';

const MAX_VALUE_CHARS = 2_000;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function clip(text: string): string {
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}… (${text.length} characters)` : text;
}

/** Text with no control characters other than tabs and newlines. */
function printable(text: string): boolean {
  // eslint-disable-next-line no-control-regex
  return !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text);
}

function json(value: unknown): string {
  // JSON has no bytes, BigInt, Map or Set: their size, their digits, arrays.
  const plain = (_k: string, v: unknown): unknown => (v instanceof Uint8Array ? `<${v.byteLength} bytes>` : typeof v === 'bigint' ? v.toString() : v instanceof Map || v instanceof Set ? [...v] : v);
  return JSON.stringify(value, plain, 2) ?? String(value);
}

function hex(bytes: Uint8Array): string {
  const shown = [...bytes.subarray(0, 64)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  return bytes.byteLength > 64 ? `${shown} … (${bytes.byteLength} bytes)` : shown;
}

/**
 * A stored value as readable text: UTF-8 JSON (indented), UTF-8 text, a MessagePack value (the
 * memo's typed helpers store those), else hex. Long values are clipped.
 */
export function describeBytes(bytes: Uint8Array): string {
  if (bytes.byteLength === 0) return '(empty)';
  try {
    const text = strictUtf8.decode(bytes);
    if (printable(text)) {
      try {
        return clip(json(JSON.parse(text)));
      } catch {
        return clip(text);
      }
    }
  } catch {
    // Not UTF-8: try MessagePack next.
  }
  try {
    const value = decodeValue(bytes);
    return clip(typeof value === 'string' ? value : json(value));
  } catch {
    return hex(bytes);
  }
}

/**
 * A value in the value codec's encoding (a workflow function's step result, signal value or
 * result) as readable text: decoded, then as `describeBytes` shows a MessagePack value; bytes
 * that are not such a value as `describeBytes` shows them.
 */
export function describeValue(bytes: Uint8Array): string {
  let value: unknown;
  try {
    value = decodeValue(bytes);
  } catch {
    return describeBytes(bytes);
  }
  return clip(typeof value === 'string' ? value : value === undefined ? 'undefined' : json(value));
}

/** "14:03:07 (12 s ago)", or "in 40 s" for a time still to come. */
export function describeTime(atMs: number, nowMs: number): string {
  const clock = new Date(atMs).toLocaleTimeString();
  const delta = Math.round((nowMs - atMs) / 1000);
  if (Math.abs(delta) < 1) return `${clock} (now)`;
  return delta > 0 ? `${clock} (${describeSeconds(delta)} ago)` : `${clock} (in ${describeSeconds(-delta)})`;
}

/** Seconds as "45 s", "3 min 5 s", "2 h 4 min". */
export function describeSeconds(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min${seconds % 60 === 0 ? '' : ` ${seconds % 60} s`}`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

export function describeDuration(ms: number): string {
  return ms < 1000 ? `${Math.max(0, Math.round(ms))} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * An error message as a person should read it: the runtime's cancel of a running step surfaces
 * as an abort error naming an internal job id; that is a cancellation, not a failure.
 */
export function isCancelMessage(message: string | null | undefined): boolean {
  return message !== null && message !== undefined && /cancel requested|cancelled|canceled/i.test(message);
}

/** What a schedule's firing does, in words: "workflow digest@1", "job tally", "a run", "a job on queue tasks". */
export function describeSchedule(target: ScheduleTargetInfo): string {
  switch (target.type) {
    case 'start':
      return `workflow ${target.workflow}`;
    case 'job':
      return `job ${target.job}`;
    case 'submit':
      return 'a run';
    case 'enqueue':
      return `a job on queue ${target.queueName}`;
  }
}
