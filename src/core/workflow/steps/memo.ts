/**
 * The memo: a durable cache for work inside a step, so a retried or redelivered step can skip
 * what an earlier attempt already paid for. Entries are objects in the runtime's object store,
 * scoped to (run, step) for `step.memo` and to the run for `step.runMemo`; never shared across
 * runs. Writes happen outside any queue transaction, so a crash can leave an entry without the
 * settlement that used it (harmless: the redelivery reads it back). Readers must tolerate an
 * absent entry (retention may delete it at any time) by redoing the work.
 *
 * Entries are sealed objects (see ../sealed-object.ts: magic `TQMM`, a length and a CRC-32C). An
 * entry that fails its checks (bit flips, truncation, an object of another kind) is reported
 * through the runtime's warn callback, naming the object, and treated as absent, so the work is
 * redone and its value overwrites the entry; a damaged entry never decodes to a different value.
 *
 * Paths: `{prefix}/memos/{run}/{step|run}/{hex(SHA-256(key))}`; a content key is
 * `content:` + hex(SHA-256(MessagePack(input))) with object keys sorted, so equal inputs give
 * equal keys however their objects were built.
 */
import { utf8 } from '../../bytes.js';
import { decodeValue, encodeRecord, encodeValue } from '../../codec.js';
import { sha256Hex } from '../../hash.js';
import { InvalidArgumentError, isTaqubaError } from '../../errors.js';
import type { ObjectStore } from '../../objects/object-store.js';
import { openSealedObject, sealObject, type SealedObjectKind } from '../../sealed-object.js';
import { show } from '../../show.js';
import { validateRunId } from '../validation.js';
import { memoObjectKey, memoRunPrefix, parseMemoObjectName, stepOutputRunPrefix } from '../keys.js';

export type MemoWarn = (message: string, error?: unknown) => void;

/** Sealed-object kind of memo entries: "TQMM", format 1 (the body is the stored value). */
const MEMO_ENTRY_KIND: SealedObjectKind = { magic: 0x54514d4d, version: 1 };

/** Options of the typed memo helpers. */
export interface MemoizedOptions<T> {
  /**
   * Checks a decoded entry. An entry that fails (or cannot be decoded at all) is treated as
   * absent: the computation runs and its value overwrites the entry.
   */
  readonly validate?: (value: unknown) => value is T;
}

/** Rebuilds a value with plain-object keys sorted, so its encoding does not depend on key order. */
function canonical(value: unknown, depth = 0): unknown {
  if (depth > 100) throw serializationError('input nests deeper than 100 levels');
  if (Array.isArray(value)) return value.map((v) => canonical(v, depth + 1));
  if (value instanceof Map || value instanceof Set) throw serializationError(`Map and Set have no stable encoding; use a plain object or an array. input=${show(value)}`);
  if (typeof value === 'object' && value !== null && !(value instanceof Uint8Array) && !(value instanceof Date)) {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw serializationError(`only plain objects, arrays, bytes and primitives can form a content key. input=${show(value)}`);
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = canonical(v, depth + 1);
    }
    return out;
  }
  return value;
}

function serializationError(message: string, cause?: unknown): InvalidArgumentError {
  const e = new InvalidArgumentError(`content key input cannot be serialized: ${message}`, { reason: 'serialization' });
  if (cause !== undefined) Object.defineProperty(e, 'cause', { value: cause });
  return e;
}

/** `content:` + hex SHA-256 of the canonical MessagePack encoding of `input`. INVALID_ARGUMENT (serialization). */
async function contentKeyOf(input: unknown): Promise<string> {
  let bytes: Uint8Array;
  try {
    bytes = encodeRecord(canonical(input));
  } catch (e) {
    if (e instanceof InvalidArgumentError) throw e;
    throw serializationError(e instanceof Error ? e.message : String(e), e);
  }
  return `content:${await sha256Hex(bytes)}`;
}

/** One memo namespace: a step's (`stepNumber` set) or a run's (`stepNumber` null). */
export class Memo {
  /** @internal */
  constructor(
    private readonly store: ObjectStore,
    private readonly prefix: string,
    readonly runId: string,
    readonly stepNumber: number | null,
    private readonly warn: MemoWarn,
  ) {}

  private async path(key: string): Promise<string> {
    if (typeof key !== 'string') throw new InvalidArgumentError(`memo key must be a string. key=${show(key)}`, { reason: 'invalid_memo_key' });
    return memoObjectKey(this.prefix, this.runId, this.stepNumber ?? 'run', await sha256Hex(utf8(key)));
  }

  /**
   * The stored bytes, or null. Any string is a valid key. An entry whose object fails its checks
   * is reported through the warn callback (naming the object) and read as null. Rejects with
   * store errors.
   */
  async get(key: string): Promise<Uint8Array | null> {
    const path = await this.path(key);
    const obj = await this.store.get(path);
    if (!obj) return null;
    try {
      return openSealedObject(MEMO_ENTRY_KIND, obj.data, path);
    } catch (e) {
      if (!isTaqubaError(e, 'CORRUPT_DATA')) throw e;
      this.warn(`memo entry is corrupt; treating it as absent. runId=${this.runId} step=${this.stepNumber ?? 'run'} key=${show(key)} object=${path} problem=${String(e.details.problem)}`, e);
      return null;
    }
  }

  /** Stores (overwrites) the entry; durable when it resolves. Rejects with store errors. */
  async put(key: string, value: Uint8Array): Promise<void> {
    if (!(value instanceof Uint8Array)) throw new InvalidArgumentError(`memo value must be a Uint8Array. value=${show(value)}`, { reason: 'invalid_memo_value' });
    await this.store.put(await this.path(key), sealObject(MEMO_ENTRY_KIND, value));
  }

  /** The key `contentGet`/`contentPut` use for `input`. INVALID_ARGUMENT (serialization). */
  contentKey(input: unknown): Promise<string> {
    return contentKeyOf(input);
  }

  /** `get` under the content key of `input`. Include an operation name in `input` when operations can share inputs. */
  async contentGet(input: unknown): Promise<Uint8Array | null> {
    return this.get(await contentKeyOf(input));
  }

  /** `put` under the content key of `input`. */
  async contentPut(input: unknown, value: Uint8Array): Promise<void> {
    await this.put(await contentKeyOf(input), value);
  }

  /**
   * The stored value of `key` if there is one that decodes (and passes `validate`); otherwise runs
   * `compute`, stores its value and returns it. An error from `compute` propagates and stores
   * nothing.
   *
   * The value round-trips exactly (see ../codec.ts `encodeValue`): JSON-like data plus undefined,
   * -0, BigInt, Map, Set, Date, typed arrays, ArrayBuffer and DataView, nested freely. A value
   * that cannot (a function, a symbol, a class instance, a cycle, ...) is rejected before
   * anything is stored with INVALID_ARGUMENT (reason `serialization`, `details.path` naming the
   * place in the value), which fails the step permanently instead of retrying the computation.
   */
  async memoized<T>(key: string, compute: () => Promise<T> | T, options: MemoizedOptions<T> = {}): Promise<T> {
    const stored = await this.get(key);
    if (stored !== null) {
      let decoded: unknown;
      let ok = true;
      try {
        decoded = decodeValue(stored);
      } catch (e) {
        ok = false;
        this.warn(`memo entry does not decode; recomputing. runId=${this.runId} step=${this.stepNumber ?? 'run'} key=${show(key)}`, e);
      }
      if (ok && options.validate && !options.validate(decoded)) {
        ok = false;
        this.warn(`memo entry fails validation; recomputing. runId=${this.runId} step=${this.stepNumber ?? 'run'} key=${show(key)}`);
      }
      if (ok) return decoded as T;
    }
    const value = await compute();
    await this.put(key, this.encodeMemoValue(key, value));
    return value;
  }

  private encodeMemoValue(key: string, value: unknown): Uint8Array {
    try {
      return encodeValue(value);
    } catch (e) {
      const problem = isTaqubaError(e, 'INVALID_ARGUMENT') ? String(e.details.problem) : e instanceof Error ? e.message : String(e);
      const path = isTaqubaError(e, 'INVALID_ARGUMENT') ? String(e.details.path) : 'value';
      const error = new InvalidArgumentError(
        `memo value cannot be stored: ${problem}. runId=${this.runId} step=${this.stepNumber ?? 'run'} key=${show(key)} path=${path}`,
        { reason: 'serialization', runId: this.runId, key: show(key), path, problem },
      );
      Object.defineProperty(error, 'cause', { value: e, configurable: true, writable: true });
      throw error;
    }
  }

  /** `memoized` under the content key of `input`. */
  async memoizedByContent<T>(input: unknown, compute: () => Promise<T> | T, options?: MemoizedOptions<T>): Promise<T> {
    return this.memoized(await contentKeyOf(input), compute, options);
  }
}

/** One stored memo entry of a run, as `MemoStore.listEntries` finds it. */
export interface MemoEntry {
  /** The step number of a `step.memo` entry, `'run'` for a `step.runMemo` entry. */
  readonly scope: number | 'run';
  /** The key, when it is one of the names the caller passed (keys are stored hashed). */
  readonly key: string | null;
  /** Hex SHA-256 of the key: the entry's object name. */
  readonly keyHash: string;
  /** The stored bytes; null when the object failed its checks (reported through warn). */
  readonly value: Uint8Array | null;
}

/** The memo entries of every run under one prefix of one object store. */
export class MemoStore {
  constructor(
    private readonly store: ObjectStore,
    readonly prefix: string,
    private readonly warn: MemoWarn = () => undefined,
  ) {}

  /** The memo of step `step` of `runId`. */
  newMemo(runId: string, step: number): Memo {
    return new Memo(this.store, this.prefix, runId, step, this.warn);
  }

  /** The run-scoped memo of `runId`, shared by all its steps. */
  newRunMemo(runId: string): Memo {
    return new Memo(this.store, this.prefix, runId, null, this.warn);
  }

  /**
   * Every memo entry of `runId` that exists now (step scopes in step order, then the run memo),
   * with its value. Keys are stored hashed: an entry whose key is in `knownKeys` is named, the
   * others carry only their hash. Rejects with INVALID_ARGUMENT (run id) or store errors.
   */
  async listEntries(runId: string, knownKeys: readonly string[] = []): Promise<MemoEntry[]> {
    validateRunId(runId);
    const names = new Map<string, string>();
    for (const key of knownKeys) names.set(await sha256Hex(utf8(key)), key);
    const prefix = memoRunPrefix(this.prefix, runId);
    const entries: MemoEntry[] = [];
    for await (const info of this.store.list(prefix)) {
      const name = parseMemoObjectName(info.key.slice(prefix.length));
      if (!name) continue;
      const { scope, keyHash } = name;
      const obj = await this.store.get(info.key);
      // Swept between the listing and the read.
      if (!obj) continue;
      let value: Uint8Array | null = null;
      try {
        value = openSealedObject(MEMO_ENTRY_KIND, obj.data, info.key);
      } catch (e) {
        if (!isTaqubaError(e, 'CORRUPT_DATA')) throw e;
        this.warn(`memo entry is corrupt. runId=${runId} object=${info.key} problem=${String(e.details.problem)}`, e);
      }
      entries.push({ scope, key: names.get(keyHash) ?? null, keyHash, value });
    }
    const order = (s: number | 'run'): number => (s === 'run' ? Number.MAX_SAFE_INTEGER : s);
    return entries.sort((a, b) => order(a.scope) - order(b.scope));
  }

  /**
   * Deletes every memo, run-memo and step-output entry of `runId` (exact path segment: `run` does
   * not match `run-2`). Returns how many objects it deleted; a failed delete is logged and
   * skipped. Rejects with INVALID_ARGUMENT (invalid run id, so an empty id can never match the
   * whole prefix) or a listing's store error.
   */
  async clearMemosForRun(runId: string): Promise<number> {
    validateRunId(runId);
    let deleted = 0;
    for (const prefix of [memoRunPrefix(this.prefix, runId), stepOutputRunPrefix(this.prefix, runId)]) {
      const keys: string[] = [];
      for await (const info of this.store.list(prefix)) keys.push(info.key);
      for (const key of keys) {
        try {
          await this.store.delete(key);
          deleted++;
        } catch (e) {
          this.warn(`deleting a memo object failed. key=${key}`, e);
        }
      }
    }
    return deleted;
  }
}
