/**
 * The caller's KV namespace inside the queue store. Keys are opaque bytes stored behind a
 * reserved tag, so they can never collide with (or show up in scans of) the queue's own keys.
 * Values are capped at MAX_KV_VALUE_SIZE and never offloaded. Every write is durable: the promise
 * resolves once the WAL object holding it is stored.
 */
import { equalBytes, startsWith } from '../../bytes.js';
import type { KvDb } from '../../kv/kv-db.js';
import type { KvReadable } from '../../kv/types.js';
import { callerKeyOf, userKey } from '../records/keys.js';
import { runTransaction } from './staged-txn.js';
import { validateCount, validateKvKey, validateKvValue } from '../records/validation.js';
import { InvalidArgumentError } from '../../errors.js';

/** One page of a KV scan. `nextCursor` is set only when at least one more entry existed. */
export interface KvPage {
  readonly entries: (readonly [Uint8Array, Uint8Array])[];
  readonly nextCursor: Uint8Array | undefined;
}

export interface KvScanOptions {
  /** `nextCursor` of the previous page. */
  readonly cursor?: Uint8Array;
  /** Page size (default 100). 0 ⇒ an empty page. */
  readonly limit?: number;
}

export async function kvGet(reader: KvReadable, key: Uint8Array): Promise<Uint8Array | undefined> {
  validateKvKey(key);
  return reader.get(userKey(key));
}

/** Durable put. INVALID_ARGUMENT for a value over the cap, before any I/O. */
export async function kvPut(db: KvDb, key: Uint8Array, value: Uint8Array): Promise<void> {
  validateKvKey(key);
  validateKvValue(value);
  await runTransaction(db, async (s) => s.put(userKey(key), value));
}

/** Durable unconditional delete. */
export async function kvDelete(db: KvDb, key: Uint8Array): Promise<void> {
  validateKvKey(key);
  await runTransaction(db, async (s) => s.delete(userKey(key)));
}

/**
 * Puts `value` only if the current value equals `expected` (`null`: only if absent). Read and
 * write are one transaction, retried on conflict, so concurrent compare-and-put loops lose no
 * update. Returns whether it wrote.
 */
export async function kvComparePut(db: KvDb, key: Uint8Array, expected: Uint8Array | null, value: Uint8Array): Promise<boolean> {
  validateKvKey(key);
  if (expected !== null) validateKvKey(expected, 'expected');
  validateKvValue(value);
  const stored = userKey(key);
  return runTransaction(db, async (s) => {
    const current = await s.get(stored);
    const matches = expected === null ? current === undefined : current !== undefined && equalBytes(current, expected);
    if (!matches) return false;
    s.put(stored, value);
    return true;
  });
}

/** Deletes only if the current value equals `expected`; false (no change) if absent or different. */
export async function kvCompareDelete(db: KvDb, key: Uint8Array, expected: Uint8Array): Promise<boolean> {
  validateKvKey(key);
  validateKvKey(expected, 'expected');
  const stored = userKey(key);
  return runTransaction(db, async (s) => {
    const current = await s.get(stored);
    if (current === undefined || !equalBytes(current, expected)) return false;
    s.delete(stored);
    return true;
  });
}

/**
 * Entries under `prefix` (empty: the whole namespace) in ascending key order, keys without the
 * internal tag. Pages are not a snapshot across calls. A cursor from another prefix ⇒ empty page.
 */
export async function kvScan(reader: KvReadable, prefix: Uint8Array, options: KvScanOptions = {}): Promise<KvPage> {
  validateKvKey(prefix, 'prefix');
  const limit = options.limit ?? 100;
  validateCount(limit, 'limit');
  const cursor = options.cursor;
  if (cursor !== undefined && !(cursor instanceof Uint8Array)) throw new InvalidArgumentError('kv scan cursor must be a Uint8Array');
  const storedPrefix = userKey(prefix);
  if (limit === 0 || (cursor !== undefined && !startsWith(cursor, storedPrefix))) return { entries: [], nextCursor: undefined };
  const entries: (readonly [Uint8Array, Uint8Array])[] = [];
  let more = false;
  let lastKey: Uint8Array | undefined;
  for await (const entry of reader.scan({ prefix: storedPrefix, start: cursor, startExclusive: cursor !== undefined, limit: limit + 1 })) {
    if (entries.length === limit) {
      more = true;
      break;
    }
    entries.push([callerKeyOf(entry.key).slice(), entry.value]);
    lastKey = entry.key;
  }
  return { entries, nextCursor: more ? lastKey : undefined };
}
