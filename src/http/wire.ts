/**
 * The HTTP carrier's wire format, shared by the server (server/) and the client (client/):
 *
 * - `POST {base}/ops/{operation}`: one route per operation of the core's list (`OPERATIONS`),
 *   body `{ args, commandId? }` and answer `{ value }` or `{ error }`, both MessagePack in the
 *   value codec (core/codec.ts: bytes, undefined, Map, Set, Date and BigInt arrive as they left),
 *   content type `application/msgpack`. A command (the list's `command` kind) carries the command
 *   id its client drew, so sending it again after a lost answer applies it once.
 * - `GET {base}/events?runId=`: server-sent events of one run; each `data:` line is the base64 of
 *   a value-encoded `HttpRunEvent`.
 * - Errors are `WireError` records (browser/wire-error.ts) without stacks (a server's paths stay
 *   on the server); the client rebuilds the library's class, so `isTaqubaError(e, code)` holds.
 */
import { systemClock } from '../core/clock.js';
import { decodeValue, encodeValue } from '../core/codec.js';
import { fromBinaryString, toBinaryString } from '../core/bytes.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { RunView } from '../core/operations/operations.js';
import type { RunEvent, WireError } from '../browser/protocol.js';

export const MSGPACK = 'application/msgpack';

/** Resolves after `ms`, or at once when `signal` aborts (the clock's sleep, its abort not an error): the carrier's polls and retry backoffs. */
export const pause = (ms: number, signal: AbortSignal): Promise<void> => systemClock.sleep(ms, signal).catch(() => undefined);
export const EVENT_STREAM = 'text/event-stream';
/** Path of the operation routes under the base path; the operation's name follows. */
export const OPERATIONS_PATH = '/ops/';
/** Path of the run-event stream under the base path. */
export const EVENTS_PATH = '/events';

/** The body of an operation request. */
export interface OperationRequest {
  /** The operation's own arguments, in order. */
  readonly args: readonly unknown[];
  /** Set for a command: the same on every send of one call. */
  readonly commandId?: string;
}

/** The body of an operation's answer. */
export type OperationAnswer = { readonly value: unknown } | { readonly error: WireError };

/** A run's state as the server saw it change (active states only: the end is the `terminal` event). */
export interface RunStatusEvent {
  readonly type: 'run-status';
  readonly runId: string;
  /** Epoch ms, from the server's clock. */
  readonly at: number;
  readonly state: Exclude<RunView['state'], 'succeeded' | 'failed' | 'cancelled'>;
  readonly currentStep: number;
}

/** The worker host's `terminal` run event: the run's committed outcome. */
export type TerminalRunEvent = Extract<RunEvent, { readonly type: 'terminal' }>;

/**
 * What the HTTP event stream of a run delivers: its state when the server saw it change, then
 * its outcome, after which the stream ends. The step-level events of the worker host
 * (`step-started`, `function-call`, ...) are not carried (yet).
 */
export type HttpRunEvent = RunStatusEvent | TerminalRunEvent;

/**
 * `value` in the value codec. Byte arrays of a subclass (Node's `Buffer`) go as plain bytes, as a
 * structured clone would carry them. INVALID_ARGUMENT (`serialization`) for what cannot round-trip.
 */
export function encodeBody(value: unknown): Uint8Array {
  return encodeValue(plainBytes(value, 0));
}

/** A body of `encodeBody`. INVALID_ARGUMENT (`invalid_body`) for bytes that do not decode. */
export function decodeBody(bytes: Uint8Array): unknown {
  try {
    return decodeValue(bytes);
  } catch (e) {
    throw new InvalidArgumentError(`the body is not MessagePack of the value codec: ${e instanceof Error ? e.message : String(e)}`, { reason: 'invalid_body' });
  }
}

/** An event as the `data:` of a server-sent event. */
export function encodeEventData(event: HttpRunEvent): string {
  return btoa(toBinaryString(encodeBody(event)));
}

/** The event of a `data:` field. INVALID_ARGUMENT (`invalid_body`) when it is not one. */
export function decodeEventData(data: string): HttpRunEvent {
  let bytes: Uint8Array;
  try {
    bytes = fromBinaryString(atob(data));
  } catch {
    throw new InvalidArgumentError('an event is not base64', { reason: 'invalid_body' });
  }
  const event = decodeBody(bytes) as Partial<HttpRunEvent> | null;
  if (typeof event !== 'object' || event === null || typeof event.type !== 'string' || typeof event.runId !== 'string') {
    throw new InvalidArgumentError('an event is not a run event', { reason: 'invalid_body' });
  }
  return event as HttpRunEvent;
}

/** `wire` without its stacks (and its cause's). */
export function withoutStacks(wire: WireError): WireError {
  const { stack: _stack, cause, ...rest } = wire;
  return cause === undefined ? rest : { ...rest, cause: withoutStacks(cause) };
}

/** Deeper than the value codec goes: what is left is refused there. */
const MAX_DEPTH = 100;

/** `value` with every byte array of a `Uint8Array` subclass as a plain `Uint8Array` view; the same value when it has none. */
function plainBytes(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return value;
  if (value instanceof Uint8Array) return Object.getPrototypeOf(value) === Uint8Array.prototype ? value : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Array.prototype) {
    const array = value as unknown[];
    let copy: unknown[] | undefined;
    for (let i = 0; i < array.length; i++) {
      const item = plainBytes(array[i], depth + 1);
      if (item !== array[i]) (copy ??= array.slice())[i] = item;
    }
    return copy ?? value;
  }
  if (proto === Object.prototype) {
    const object = value as Record<string, unknown>;
    let copy: Record<string, unknown> | undefined;
    for (const key of Object.keys(object)) {
      const item = plainBytes(object[key], depth + 1);
      if (item !== object[key]) (copy ??= { ...object })[key] = item;
    }
    return copy ?? value;
  }
  return value;
}
