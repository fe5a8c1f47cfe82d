/**
 * Staging handles for caller-KV effects. `EffectsHandle` is a step's: what it stages is applied
 * in the settlement transaction of the outcome the runner returns. `TerminalEffects` is a
 * terminal hook's: applied with the notification's acknowledgement, and it can stage follow-up
 * enqueues too. Both validate as they stage and refuse everything once sealed (after the runner
 * or hook returned), so a handle kept past its call cannot smuggle writes in.
 *
 * Rules checked when staging (INVALID_ARGUMENT, `details.reason`): `reserved_kv_key` (key under
 * `workflow/`), `kv_value_too_large`, `conflicting_kv_effect` (one key both written and deleted
 * in one step), `effects_sealed`. Writing one key twice keeps the last value.
 */
import { toBinaryString } from '../../bytes.js';
import { InvalidArgumentError } from '../../errors.js';
import type { EnqueueRequest, SettlementEffects } from '../../queue/index.js';
import { showKey } from '../../show.js';
import { checkKvValue, checkUserKvKey, kvKeyBytes } from '../validation.js';

/** A caller-KV key: UTF-8 text or raw bytes. */
export type KvKey = string | Uint8Array;

/** Staged caller-KV operations, in a form that can be stored and replayed. */
export interface StagedKvEffects {
  readonly writes: readonly (readonly [Uint8Array, Uint8Array])[];
  readonly deletes: readonly Uint8Array[];
  /** In-process callbacks run once the writes committed; never stored (a replayed record has none). */
  readonly onCommitted?: readonly (() => void)[];
  /**
   * The deletes hold the run's whole history (a workflow function's run ended by the delivery that
   * wrote all of it), so its ending need not scan for it. Never stored: a replay scans again.
   */
  readonly runHistoryStaged?: boolean;
}

export const NO_KV_EFFECTS: StagedKvEffects = { writes: [], deletes: [] };

/** Accumulates validated writes and deletes keyed by their bytes. */
class KvAccumulator {
  private readonly writes = new Map<string, [Uint8Array, Uint8Array]>();
  private readonly deletes = new Map<string, Uint8Array>();
  private readonly hooks: (() => void)[] = [];
  private sealed = false;

  constructor(private readonly what: string) {}

  put(key: KvKey, value: Uint8Array, reservedAllowed = false): void {
    this.checkOpen();
    const k = kvKeyBytes(key);
    if (!reservedAllowed) checkUserKvKey(k);
    checkKvValue(k, value);
    const slot = toBinaryString(k);
    if (this.deletes.has(slot)) throw conflict(k);
    this.writes.set(slot, [k, value]);
  }

  delete(key: KvKey, reservedAllowed = false): void {
    this.checkOpen();
    const k = kvKeyBytes(key);
    if (!reservedAllowed) checkUserKvKey(k);
    const slot = toBinaryString(k);
    if (this.writes.has(slot)) throw conflict(k);
    this.deletes.set(slot, k);
  }

  afterCommit(hook: () => void): void {
    this.checkOpen();
    this.hooks.push(hook);
  }

  seal(): void {
    this.sealed = true;
  }

  get isSealed(): boolean {
    return this.sealed;
  }

  snapshot(): StagedKvEffects {
    const staged = { writes: [...this.writes.values()], deletes: [...this.deletes.values()] };
    return this.hooks.length === 0 ? staged : { ...staged, onCommitted: [...this.hooks] };
  }

  private checkOpen(): void {
    if (this.sealed) {
      throw new InvalidArgumentError(`${this.what} is sealed: effects can only be staged while the call that received the handle runs`, { reason: 'effects_sealed' });
    }
  }
}

function conflict(key: Uint8Array): InvalidArgumentError {
  return new InvalidArgumentError(`kv key staged for both a write and a delete in one step. key=${showKey(key)}`, { reason: 'conflicting_kv_effect', key: showKey(key) });
}

/**
 * A step's effects: caller-KV writes and deletes applied atomically with the settlement of the
 * outcome the runner returns (continue, succeed, fail or cancel). Nothing is applied when the step
 * throws or when an external cancel overrides its outcome. Delivery is at-least-once, so stage
 * absolute values. A detached handle (unit tests) validates but never applies.
 */
export class EffectsHandle {
  private readonly acc = new KvAccumulator('step effects handle');
  private readonly failure = new KvAccumulator('step effects handle');
  private runHistoryStaged = false;

  /** Stages a write. Throws INVALID_ARGUMENT (reserved_kv_key, kv_value_too_large, conflicting_kv_effect, effects_sealed). */
  put(key: KvKey, value: Uint8Array): void {
    this.acc.put(key, value);
  }

  /** Stages a delete. Throws INVALID_ARGUMENT (reserved_kv_key, conflicting_kv_effect, effects_sealed). */
  delete(key: KvKey): void {
    this.acc.delete(key);
  }

  /**
   * @internal For layers built on the runtime: a write that may use the reserved prefix, applied
   * with the outcome exactly like `put`.
   */
  putInternal(key: Uint8Array, value: Uint8Array): void {
    this.acc.put(key, value, true);
  }

  /**
   * @internal A write applied only if this delivery's settlement fails the run through a
   * dead-letter (permanent error, last transient attempt); never with an acknowledged outcome.
   */
  putOnFailure(key: Uint8Array, value: Uint8Array): void {
    this.failure.put(key, value, true);
  }

  /**
   * @internal Runs `hook` in this process once the outcome's settlement committed the staged
   * effects (never when they are dropped, nor when a replay record applies them again).
   */
  afterCommit(hook: () => void): void {
    this.acc.afterCommit(hook);
  }

  /**
   * @internal Deletes `keys`, the run's whole history, with the outcome (a workflow function's
   * run that ends in the delivery that wrote every entry): the ending then skips its scan.
   */
  deleteRunHistory(keys: readonly Uint8Array[]): void {
    for (const key of keys) this.acc.delete(key, true);
    this.runHistoryStaged = true;
  }

  /** @internal Like `afterCommit`, for the writes staged with `putOnFailure`. */
  afterFailureCommit(hook: () => void): void {
    this.failure.afterCommit(hook);
  }

  /** @internal Refuses further staging. */
  seal(): void {
    this.acc.seal();
    this.failure.seal();
  }

  /** @internal What was staged for the outcome. */
  staged(): StagedKvEffects {
    const staged = this.acc.snapshot();
    return this.runHistoryStaged ? { ...staged, runHistoryStaged: true } : staged;
  }

  /** @internal What was staged for a failing settlement. */
  stagedOnFailure(): StagedKvEffects {
    return this.failure.snapshot();
  }
}

/**
 * A terminal hook's effects: caller-KV writes/deletes (same rules as `EffectsHandle`) and
 * follow-up enqueues, applied in the transaction that acknowledges the notification, and only
 * if the hook returns without throwing.
 */
export class TerminalEffects {
  private readonly acc = new KvAccumulator('terminal effects handle');
  private readonly enqueues: EnqueueRequest[] = [];

  put(key: KvKey, value: Uint8Array): void {
    this.acc.put(key, value);
  }

  delete(key: KvKey): void {
    this.acc.delete(key);
  }

  /** Stages a follow-up enqueue (validated by the queue when applied). Throws INVALID_ARGUMENT once sealed. */
  enqueue(request: EnqueueRequest): void {
    if (this.acc.isSealed) {
      throw new InvalidArgumentError('terminal effects handle is sealed: effects can only be staged while the hook runs', { reason: 'effects_sealed' });
    }
    if (typeof request !== 'object' || request === null) throw new InvalidArgumentError('enqueue request must be an object', { reason: 'invalid_enqueue' });
    this.enqueues.push(request);
  }

  /** @internal */
  seal(): void {
    this.acc.seal();
  }

  /** @internal The staged effects as queue settlement effects. */
  toSettlementEffects(): SettlementEffects {
    const kv = this.acc.snapshot();
    return { enqueues: [...this.enqueues], kvWrites: kv.writes, kvDeletes: kv.deletes };
  }
}

/** Merges KV effects into settlement effects (later writes win over earlier ones of one key), their after-commit hooks too. */
export function mergeKv(
  into: { kvWrites: (readonly [Uint8Array, Uint8Array])[]; kvDeletes: Uint8Array[]; onCommitted?: (() => void)[]; runHistoryStaged?: boolean },
  kv: StagedKvEffects,
): void {
  for (const w of kv.writes) into.kvWrites.push(w);
  for (const d of kv.deletes) into.kvDeletes.push(d);
  if (kv.onCommitted !== undefined) (into.onCommitted ??= []).push(...kv.onCommitted);
  if (kv.runHistoryStaged === true) into.runHistoryStaged = true;
}
