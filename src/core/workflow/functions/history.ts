/**
 * A workflow function's history: one caller-KV entry per `ctx` operation, in call order, so a
 * replay reads it with one scan and serves every finished operation from it.
 *
 *   workflow/fn/{q}/{run}/{gen}/{position:08}              one event (MessagePack array, see `Event`)
 *   workflow/fn/{q}/{run}/{gen}/{position:08}/{attempt:08}  a failed attempt of the step there, retried (`FailedAttempt`)
 *
 * A step's failed attempts are durable so that a crash in the middle of its retries continues
 * the attempt count (and the backoff) instead of starting over, and so inspectors can show them.
 * The happy path writes none.
 *
 * `{gen}` is the id of the run's step-0 job: a new run under a released run id gets a new one, so
 * it never replays an earlier run's history. Every settlement that ends a run (its function
 * returned or threw, a cancel, a dead-lettered step, reconciliation) deletes the run's history,
 * all generations, in the same transaction (`RuntimeContext.endingDeletes`).
 *
 * Events are written create-only (`kvComparePut` with no expected value): of two executions of
 * one run (a lease that expired under a stalled process), the first to record a position wins
 * and the other adopts its value, so a history never holds two answers to one operation.
 */
import { fromUtf8, utf8 } from '../../bytes.js';
import { decodeRecord, encodeRecord } from '../../codec.js';
import type { Queue } from '../../queue/index.js';
import { corrupt } from '../errors.js';
import { queueSegment, signalBufferKey } from '../keys.js';

/** The operations a history records; `kind` names them in determinism errors. */
export type Event =
  | { readonly kind: 'step'; readonly name: string; readonly value: Uint8Array }
  | { readonly kind: 'step'; readonly name: string; readonly failed: { readonly message: string; readonly attempts: number } }
  | { readonly kind: 'sleep'; readonly name: string; readonly untilMs: number; readonly atStep: number }
  /** A wait begun at underlying step `atStep`; `value` (bytes, or null after the timeout) once it resolved. */
  | { readonly kind: 'wait'; readonly name: string; readonly untilMs: number; readonly atStep: number; readonly value?: Uint8Array | null }
  | { readonly kind: 'now' | 'random' | 'uuid'; readonly name: string; readonly value: number | string }
  /** A child run `childRunId` of workflow `name`, invoked at underlying step `atStep`; `value` (its outcome's signal payload) once it ended. */
  | { readonly kind: 'invoke'; readonly name: string; readonly childRunId: string; readonly atStep: number; readonly value?: Uint8Array };

/** An attempt of the step at a position that failed with `error` at `atMs`; the step's next attempt starts at `retryAtMs`. */
export interface FailedAttempt {
  readonly name: string;
  readonly attempt: number;
  readonly error: string;
  readonly atMs: number;
  readonly retryAtMs: number;
}

/** One run generation's history: the events by position, and the failed attempts of the steps by position (oldest first). */
export interface History {
  readonly events: Map<number, Event>;
  readonly failures: Map<number, FailedAttempt[]>;
}

export const emptyHistory = (): History => ({ events: new Map(), failures: new Map() });

const PREFIX = 'workflow/fn/';
const POSITION_WIDTH = 8;

export const historyPrefix = (queueName: string, runId: string, gen: string): Uint8Array => utf8(`${PREFIX}${queueSegment(queueName)}/${runId}/${gen}/`);

/** Every history of a run id (all generations): for the sweep of runs that ended outside their function. */
export const runHistoryPrefix = (queueName: string, runId: string): Uint8Array => utf8(`${PREFIX}${queueSegment(queueName)}/${runId}/`);

const padded = (n: number): string => String(n).padStart(POSITION_WIDTH, '0');

function keyUnder(prefix: Uint8Array, tail: string): Uint8Array {
  const bytes = utf8(tail);
  const key = new Uint8Array(prefix.length + bytes.length);
  key.set(prefix);
  key.set(bytes, prefix.length);
  return key;
}

export const eventKey = (prefix: Uint8Array, position: number): Uint8Array => keyUnder(prefix, padded(position));

export const failureKey = (prefix: Uint8Array, position: number, attempt: number): Uint8Array => keyUnder(prefix, `${padded(position)}/${padded(attempt)}`);

export const encodeFailure = (f: FailedAttempt): Uint8Array => encodeRecord([f.name, f.attempt, f.error, f.atMs, f.retryAtMs]);

function decodeFailure(bytes: Uint8Array, where: string): FailedAttempt {
  const bad = (field: string): Error => corrupt(`undecodable workflow failed attempt. field=${field} key=${where}`, { reason: 'undecodable_record', record: 'workflow failed attempt', field });
  let raw: unknown;
  try {
    raw = decodeRecord(bytes);
  } catch {
    throw bad('msgpack');
  }
  if (!Array.isArray(raw) || raw.length !== 5) throw bad('layout');
  const [name, attempt, error, atMs, retryAtMs] = raw as unknown[];
  if (typeof name !== 'string') throw bad('name');
  if (typeof error !== 'string') throw bad('error');
  if (typeof attempt !== 'number' || typeof atMs !== 'number' || typeof retryAtMs !== 'number') throw bad('numbers');
  return { name, attempt, error, atMs, retryAtMs };
}

const ENTRY_TAIL = /^(\d+)(\/\d+)?$/;

/**
 * Adds the history entry under `key` (whose first `prefixLength` bytes are its generation's
 * prefix) to `history`; false for a key that names no entry. CORRUPT_DATA for an undecodable one.
 */
export function addEntry(history: History, key: Uint8Array, prefixLength: number, value: Uint8Array): boolean {
  const match = ENTRY_TAIL.exec(fromUtf8(key.subarray(prefixLength)));
  if (match === null) return false;
  const where = fromUtf8(key);
  const position = Number(match[1]);
  if (match[2] === undefined) {
    history.events.set(position, decodeEvent(value, where));
    return true;
  }
  const failures = history.failures.get(position) ?? [];
  // Keys are scanned in attempt order (fixed width).
  failures.push(decodeFailure(value, where));
  history.failures.set(position, failures);
  return true;
}

const KIND_CODES = { step: 0, stepFailed: 1, sleep: 2, wait: 3, now: 4, random: 5, uuid: 6, invoke: 7 } as const;

export function encodeEvent(e: Event): Uint8Array {
  switch (e.kind) {
    case 'step':
      return 'failed' in e ? encodeRecord([KIND_CODES.stepFailed, e.name, e.failed.message, e.failed.attempts]) : encodeRecord([KIND_CODES.step, e.name, e.value]);
    case 'sleep':
      return encodeRecord([KIND_CODES.sleep, e.name, e.untilMs, e.atStep]);
    case 'wait':
      return encodeRecord(e.value === undefined ? [KIND_CODES.wait, e.name, e.untilMs, e.atStep] : [KIND_CODES.wait, e.name, e.untilMs, e.atStep, e.value]);
    case 'invoke':
      return encodeRecord(e.value === undefined ? [KIND_CODES.invoke, e.name, e.childRunId, e.atStep] : [KIND_CODES.invoke, e.name, e.childRunId, e.atStep, e.value]);
    default:
      return encodeRecord([KIND_CODES[e.kind], e.name, e.value]);
  }
}

export function decodeEvent(bytes: Uint8Array, where: string): Event {
  const bad = (field: string): Error => corrupt(`undecodable workflow history event. field=${field} key=${where}`, { reason: 'undecodable_record', record: 'workflow history event', field });
  let raw: unknown;
  try {
    raw = decodeRecord(bytes);
  } catch {
    throw bad('msgpack');
  }
  if (!Array.isArray(raw) || typeof raw[1] !== 'string') throw bad('layout');
  const [code, name] = raw as [number, string];
  const num = (i: number, field: string): number => {
    if (typeof raw[i] !== 'number') throw bad(field);
    return raw[i] as number;
  };
  switch (code) {
    case KIND_CODES.step:
      if (!(raw[2] instanceof Uint8Array)) throw bad('value');
      return { kind: 'step', name, value: raw[2] };
    case KIND_CODES.stepFailed:
      if (typeof raw[2] !== 'string') throw bad('message');
      return { kind: 'step', name, failed: { message: raw[2], attempts: num(3, 'attempts') } };
    case KIND_CODES.sleep:
      return { kind: 'sleep', name, untilMs: num(2, 'untilMs'), atStep: num(3, 'atStep') };
    case KIND_CODES.wait: {
      const value = raw.length > 4 ? raw[4] : undefined;
      if (value !== undefined && value !== null && !(value instanceof Uint8Array)) throw bad('value');
      return value === undefined ? { kind: 'wait', name, untilMs: num(2, 'untilMs'), atStep: num(3, 'atStep') } : { kind: 'wait', name, untilMs: num(2, 'untilMs'), atStep: num(3, 'atStep'), value };
    }
    case KIND_CODES.now:
    case KIND_CODES.random:
      return { kind: code === KIND_CODES.now ? 'now' : 'random', name, value: num(2, 'value') };
    case KIND_CODES.invoke: {
      if (typeof raw[2] !== 'string') throw bad('childRunId');
      const value = raw.length > 4 ? raw[4] : undefined;
      if (value !== undefined && !(value instanceof Uint8Array)) throw bad('value');
      const base = { kind: 'invoke' as const, name, childRunId: raw[2], atStep: num(3, 'atStep') };
      return value === undefined ? base : { ...base, value };
    }
    case KIND_CODES.uuid:
      if (typeof raw[2] !== 'string') throw bad('value');
      return { kind: 'uuid', name, value: raw[2] };
    default:
      throw bad('kind');
  }
}

/** One run generation's history, read with one scan (paged). */
export async function loadHistory(queue: Queue, prefix: Uint8Array): Promise<History> {
  const history = emptyHistory();
  let cursor: Uint8Array | undefined;
  do {
    const page = await queue.kvScan(prefix, { cursor, limit: 1000 });
    for (const [key, value] of page.entries) {
      if (!addEntry(history, key, prefix.length, value)) throw corrupt(`workflow history key without a position. key=${fromUtf8(key)}`, { reason: 'undecodable_record', record: 'workflow history key' });
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return history;
}

/**
 * What the settlement ending run `runId` deletes besides its records: every history entry of the
 * id (all generations) and the signals still buffered for it (`{runId}#{name}`), so a later run
 * under the id starts with neither; and the children it still waits for (`invoke` events without
 * an outcome), which the ending cancels. `historyStaged`: the ending deletes the history already
 * (a run that invoked no child, ended by the delivery that wrote all of it). `noSignals`: no
 * signal is buffered for the run (runs/signal-watch.ts), so none is looked for.
 */
export async function functionRunLeftovers(queue: Queue, queueName: string, runId: string, known: { readonly historyStaged?: boolean; readonly noSignals?: boolean } = {}): Promise<{ keys: Uint8Array[]; pendingChildren: string[] }> {
  const [history, signals] = await Promise.all([
    known.historyStaged ? [] : entriesUnder(queue, runHistoryPrefix(queueName, runId)),
    known.noSignals ? [] : entriesUnder(queue, signalBufferKey(`${runId}#`)),
  ]);
  const pendingChildren: string[] = [];
  for (const [key, value] of history) {
    let event: Event;
    try {
      event = decodeEvent(value, fromUtf8(key));
    } catch {
      continue; // an undecodable entry is deleted all the same
    }
    if (event.kind === 'invoke' && event.value === undefined) pendingChildren.push(event.childRunId);
  }
  return { keys: [...history, ...signals].map(([key]) => key), pendingChildren };
}

async function entriesUnder(queue: Queue, prefix: Uint8Array): Promise<(readonly [Uint8Array, Uint8Array])[]> {
  const entries: (readonly [Uint8Array, Uint8Array])[] = [];
  let cursor: Uint8Array | undefined;
  do {
    const page = await queue.kvScan(prefix, { cursor, limit: 1000 });
    entries.push(...page.entries);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return entries;
}
