import { systemClock, type Clock } from '../clock.js';
import { InvalidConfigError } from '../errors.js';
import { validateObjectKey } from '../objects/keys.js';
import { checkOptions, numberRule, optionNames } from '../options.js';
import type { MergeOperator } from './types.js';

/**
 * Named protocol steps (`open:bump-epoch`, `open:fence-wal`, `open:seal-log`, `wal:put` (also
 * before each log append), `flush:sst-put`, `flush:manifest-put`, `compact:manifest-put`; see
 * docs/rfcs/0001-kv-engine.md and 0002-wal-append-log.md) call this hook
 * before acting. Tests use it to
 * pause, fail or "crash" at a precise step; by default it is absent.
 */
export type FaultHook = (point: string, details: Record<string, number | string>) => void | Promise<void>;

export interface KvDbOptions {
  /** Object-key prefix under which the engine keeps its objects. Default `'kv'`. */
  readonly path?: string;
  /** Needed when any write uses `merge`. */
  readonly mergeOperator?: MergeOperator;
  /** How long a commit waits for others to join its WAL put when the writer is idle. Default 0 (next macrotask). */
  readonly flushIntervalMs?: number;
  /** Seal a WAL batch early once it holds this many bytes. Default 4 MiB. */
  readonly flushMaxBytes?: number;
  /** Freeze the memtable and write it as a table at this size. Default 4 MiB. */
  readonly memtableBytes?: number;
  /**
   * Frozen memtables allowed to wait for their table write before commits stall (write
   * backpressure; heap stays near (1 + this) x memtableBytes). Default 2.
   */
  readonly maxFrozenMemtables?: number;
  /** Target data block size in tables. Default 4 KiB. */
  readonly blockBytes?: number;
  /** Upper bound on a table written by compaction; larger runs are split. Default 32 MiB. */
  readonly targetSstBytes?: number;
  /** Byte budget of the shared block cache. Default 16 MiB. */
  readonly blockCacheBytes?: number;
  /** Merge runs once there are more than this many. Default 6. */
  readonly maxRuns?: number;
  /** The engine's only source of time (its batching timers). Default the system clock. */
  readonly clock?: Clock;
  /** Test hook at protocol steps. */
  readonly faults?: FaultHook;
  /**
   * Where the write-ahead log goes. `'auto'` (default): an append log when the store offers one
   * (the filesystem store: one `write` + `fdatasync` per group commit), else WAL objects.
   * `'objects'`: always WAL objects (one create-only object per group commit). `'log'`: an
   * append log, INVALID_CONFIG when the store has none. See docs/rfcs/0002-wal-append-log.md.
   */
  readonly wal?: WalKind;
}

export type WalKind = 'auto' | 'log' | 'objects';
const WAL_KINDS: readonly WalKind[] = ['auto', 'log', 'objects'];

/**
 * Every KvDbOptions option name. Adding an option: add its name here too (the compiler insists),
 * or `KvDb.open` rejects it as unknown (INVALID_CONFIG naming it and the nearest known name).
 */
export const KV_DB_OPTION_NAMES = optionNames<KvDbOptions>({
  path: true,
  mergeOperator: true,
  flushIntervalMs: true,
  flushMaxBytes: true,
  memtableBytes: true,
  maxFrozenMemtables: true,
  blockBytes: true,
  targetSstBytes: true,
  blockCacheBytes: true,
  maxRuns: true,
  clock: true,
  faults: true,
  wal: true,
});

export type ResolvedKvDbOptions = Required<Omit<KvDbOptions, 'mergeOperator' | 'faults'>> & Pick<KvDbOptions, 'mergeOperator' | 'faults'>;

export const DEFAULT_KV_PATH = 'kv';
const MiB = 1024 * 1024;

function positive(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  const rule = numberRule(value, { min });
  if (rule !== undefined) throw new InvalidConfigError(`${name} ${rule}. option=${name} value=${String(value)}`, { option: name });
  return value;
}

export function resolveKvDbOptions(options: KvDbOptions = {}): ResolvedKvDbOptions {
  checkOptions(options, KV_DB_OPTION_NAMES, 'kv');
  const path = options.path ?? DEFAULT_KV_PATH;
  try {
    validateObjectKey(path);
  } catch (e) {
    throw new InvalidConfigError(`path is not a valid object key prefix. path=${JSON.stringify(path)}`, { option: 'path' });
  }
  if (options.mergeOperator !== undefined && typeof options.mergeOperator !== 'function') {
    throw new InvalidConfigError('mergeOperator must be a function. option=mergeOperator', { option: 'mergeOperator' });
  }
  if (options.wal !== undefined && !WAL_KINDS.includes(options.wal)) {
    throw new InvalidConfigError(`wal must be one of ${WAL_KINDS.join(', ')}. option=wal value=${String(options.wal)}`, { option: 'wal' });
  }
  return {
    path,
    wal: options.wal ?? 'auto',
    mergeOperator: options.mergeOperator,
    faults: options.faults,
    clock: options.clock ?? systemClock,
    flushIntervalMs: positive('flushIntervalMs', options.flushIntervalMs, 0, 0),
    flushMaxBytes: positive('flushMaxBytes', options.flushMaxBytes, 4 * MiB, 1024),
    memtableBytes: positive('memtableBytes', options.memtableBytes, 4 * MiB, 1024),
    maxFrozenMemtables: positive('maxFrozenMemtables', options.maxFrozenMemtables, 2, 1),
    blockBytes: positive('blockBytes', options.blockBytes, 4096, 256),
    targetSstBytes: positive('targetSstBytes', options.targetSstBytes, 32 * MiB, 4096),
    blockCacheBytes: positive('blockCacheBytes', options.blockCacheBytes, 16 * MiB, 0),
    maxRuns: positive('maxRuns', options.maxRuns, 6, 2),
  };
}
