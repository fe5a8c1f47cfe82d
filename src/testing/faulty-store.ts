import { systemClock, type Clock } from '../core/clock.js';
import { StoreUnavailableError } from '../core/errors.js';
import type { GetOptions, ListOptions, ObjectInfo, ObjectStore, ObjectVersion, PutOptions, StoredObject, WriterLock } from '../core/objects/object-store.js';
import { validatePutData } from '../core/objects/keys.js';

/** The kinds of ObjectStore call a fault rule can select. */
export type ObjectOperation = 'get' | 'put' | 'delete' | 'list';

/** The call a fault is about to hit: for `list`, `key` is the prefix. */
export interface FaultCall {
  readonly op: ObjectOperation;
  readonly key: string;
}

/** Which calls a rule sees. Every call that matches counts toward the rule's `nth`. */
export interface FaultMatch {
  /** Only these kinds of call (default: every kind). */
  readonly ops?: readonly ObjectOperation[];
  /** Only calls whose key (a list's prefix) starts with this. */
  readonly keyPrefix?: string;
}

interface FailureOptions {
  /**
   * `'before'` (default): the call never reaches the store. `'after'`: the store performs it and
   * the caller still sees a failure, like a response lost on the network.
   */
  readonly when?: 'before' | 'after';
  /** The error to throw; default a StoreUnavailableError with `details.injected: true`. */
  readonly error?: (call: FaultCall) => Error;
}

/** Window of matching calls a rule fires on: calls `nth` .. `nth + count - 1` (1-based). */
interface Window {
  /** The first matching call to hit (1-based, counted from when the rule was added). Default 1. */
  readonly nth?: number;
  /** How many consecutive matching calls to hit (default 1; `Infinity` for all that follow). */
  readonly count?: number;
}

/** A fault to inject; a discriminated union on `type`. */
export type FaultRule =
  /** Fail the matching calls inside the window. */
  | (FaultMatch & Window & FailureOptions & { readonly type: 'fail' })
  /** Fail each matching call with probability `rate` (0..1), drawn from the store's random source. */
  | (FaultMatch & FailureOptions & { readonly type: 'fail-rate'; readonly rate: number })
  /** Delay every matching call by `ms` through the store's clock before it starts. */
  | (FaultMatch & { readonly type: 'latency'; readonly ms: number })
  /**
   * Tear the matching puts inside the window: store only the first `keepBytes` bytes (with the
   * put's own preconditions), then report `'fail'` (a StoreUnavailableError) or `'succeed'`.
   */
  | (FaultMatch & Window & { readonly type: 'tear-write'; readonly keepBytes: number; readonly outcome: 'fail' | 'succeed' });

/** A live handle on an added rule. */
export interface FaultRuleHandle {
  readonly rule: FaultRule;
  /** Calls that matched the rule so far. */
  readonly matched: number;
  /** Times the rule injected its fault. */
  readonly fired: number;
  /** Stops the rule; later calls no longer count toward it. */
  remove(): void;
}

export interface FaultyObjectStoreOptions {
  /** Random source in [0, 1) for `fail-rate`; default a PRNG seeded with `seed`. */
  readonly random?: () => number;
  /** Seed of the default PRNG (default 1). Ignored when `random` is given. */
  readonly seed?: number;
  /** Where `latency` sleeps (default the system clock); pass a MockClock to drive it by hand. */
  readonly clock?: Pick<Clock, 'sleep'>;
}

/** A small deterministic PRNG (mulberry32) returning floats in [0, 1), for reproducible faults. */
export function createSeededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class ActiveRule implements FaultRuleHandle {
  matched = 0;
  fired = 0;
  constructor(
    readonly rule: FaultRule,
    private readonly owner: Set<ActiveRule>,
  ) {}

  remove(): void {
    this.owner.delete(this);
  }

  matches(call: FaultCall): boolean {
    const { ops, keyPrefix } = this.rule;
    if (this.rule.type === 'tear-write' && call.op !== 'put') return false;
    return (ops === undefined || ops.includes(call.op)) && (keyPrefix === undefined || call.key.startsWith(keyPrefix));
  }

  inWindow(): boolean {
    const rule = this.rule as Window;
    const nth = rule.nth ?? 1;
    return this.matched >= nth && this.matched < nth + (rule.count ?? 1);
  }
}

/** What a call will suffer, decided once when it starts so every rule counts it exactly once. */
interface Plan {
  readonly call: FaultCall;
  readonly delayMs: number;
  readonly failure?: { readonly rule: ActiveRule; readonly options: FailureOptions };
  readonly tear?: { readonly keepBytes: number; readonly outcome: 'fail' | 'succeed' };
}

/**
 * A test tool: wraps any ObjectStore and injects faults by rule (fail the nth call, fail a
 * fraction of calls, add latency, tear a write) plus a crash switch that fails every later call.
 * Rules can be added and removed while calls are running. Without rules it is transparent.
 *
 * Injected failures are StoreUnavailableError (STORE_UNAVAILABLE) with `details.injected: true`
 * unless a rule supplies its own error; everything else the inner store throws passes through.
 * A `list` decides its faults when iteration starts (the first `next()`).
 *
 * @example
 * const faulty = new FaultyObjectStore(new MemoryObjectStore());
 * faulty.addRule({ type: 'fail', ops: ['put'], keyPrefix: 'db/wal/', nth: 3 });
 */
export class FaultyObjectStore implements ObjectStore {
  private readonly rules = new Set<ActiveRule>();
  private readonly random: () => number;
  private readonly clock: Pick<Clock, 'sleep'>;
  private crashed = false;
  private injected = 0;
  /** The inner store's writer lock, when it has one (not subject to the rules). */
  readonly lockWriter?: (path: string) => Promise<WriterLock>;

  constructor(
    /** The wrapped store (reach it directly to inspect state behind the faults). */
    readonly inner: ObjectStore,
    options: FaultyObjectStoreOptions = {},
  ) {
    this.random = options.random ?? createSeededRandom(options.seed ?? 1);
    this.clock = options.clock ?? systemClock;
    this.lockWriter = inner.lockWriter?.bind(inner);
    const batch = inner.deleteMany?.bind(inner);
    if (batch) {
      // One batch is one `delete` call for the rules (its key: the first key of the batch).
      this.deleteMany = async (keys) => this.run(this.plan('delete', keys[0] ?? ''), () => batch(keys));
    }
  }

  /** Present exactly when the inner store has it. Faults as for `delete`. */
  readonly deleteMany?: (keys: readonly string[]) => Promise<void>;

  /** Adds a rule; it sees calls that start from now on. */
  addRule(rule: FaultRule): FaultRuleHandle {
    const active = new ActiveRule(rule, this.rules);
    this.rules.add(active);
    return active;
  }

  /** Removes every rule (the crash switch is separate). */
  clearRules(): void {
    this.rules.clear();
  }

  /**
   * Simulates the process or the store dying: every later call fails, and so does every call
   * still in flight when it returns (its effect on the store may or may not have happened).
   */
  crash(): void {
    this.crashed = true;
  }

  /** Undoes `crash()`, like a restart that finds the store as the crash left it. */
  recover(): void {
    this.crashed = false;
  }

  get isCrashed(): boolean {
    return this.crashed;
  }

  /** How many faults were injected so far (failures, tears and crash refusals). */
  get injectedCount(): number {
    return this.injected;
  }

  /** Rejects with injected STORE_UNAVAILABLE, or whatever the inner store rejects with. */
  async get(key: string, options?: GetOptions): Promise<StoredObject | undefined> {
    return this.run(this.plan('get', key), () => this.inner.get(key, options));
  }

  /** Rejects with injected STORE_UNAVAILABLE, or whatever the inner store rejects with. */
  async put(key: string, data: Uint8Array, options?: PutOptions): Promise<{ version: ObjectVersion }> {
    validatePutData(key, data); // as the inner store would, before a rule could tear or count it
    const plan = this.plan('put', key);
    const tear = plan.tear;
    if (!tear) return this.run(plan, () => this.inner.put(key, data, options));
    return this.run(plan, async () => {
      const result = await this.inner.put(key, data.subarray(0, Math.max(0, Math.min(tear.keepBytes, data.length))), options);
      if (tear.outcome === 'succeed') return result;
      throw this.fault(plan.call, 'torn write', { torn: true });
    });
  }

  /** Rejects with injected STORE_UNAVAILABLE, or whatever the inner store rejects with. */
  async delete(key: string): Promise<void> {
    return this.run(this.plan('delete', key), () => this.inner.delete(key));
  }

  /** Rejects (during iteration) with injected STORE_UNAVAILABLE, or whatever the inner store rejects with. */
  async *list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> {
    const plan = this.plan('list', prefix);
    await this.before(plan);
    for await (const info of this.inner.list(prefix, options)) {
      this.throwIfCrashed(plan.call);
      yield info;
    }
    this.after(plan);
  }

  private plan(op: ObjectOperation, key: string): Plan {
    const call: FaultCall = { op, key };
    let delayMs = 0;
    let failure: Plan['failure'];
    let tear: Plan['tear'];
    for (const active of [...this.rules]) {
      if (!active.matches(call)) continue;
      active.matched++;
      const { rule } = active;
      if (rule.type === 'latency') {
        delayMs += rule.ms;
      } else if (rule.type === 'fail' || rule.type === 'fail-rate') {
        // Draw for every matching call so the random sequence does not depend on other rules.
        const hit = rule.type === 'fail' ? active.inWindow() : this.random() < rule.rate;
        if (hit && !failure) failure = { rule: active, options: rule };
      } else if (active.inWindow() && !tear) {
        tear = { keepBytes: rule.keepBytes, outcome: rule.outcome };
        active.fired++;
      }
    }
    if (failure) failure.rule.fired++;
    // A failure before the call wins over a tear: nothing reaches the store.
    if (failure && (failure.options.when ?? 'before') === 'before') tear = undefined;
    return { call, delayMs, failure, tear };
  }

  private async run<T>(plan: Plan, perform: () => Promise<T>): Promise<T> {
    await this.before(plan);
    const result = await perform();
    this.after(plan);
    return result;
  }

  private async before(plan: Plan): Promise<void> {
    if (plan.delayMs > 0) await this.clock.sleep(plan.delayMs);
    this.throwIfCrashed(plan.call);
    if (plan.failure && (plan.failure.options.when ?? 'before') === 'before') throw this.failureFor(plan);
  }

  private after(plan: Plan): void {
    this.throwIfCrashed(plan.call);
    if (plan.failure?.options.when === 'after') throw this.failureFor(plan);
  }

  private throwIfCrashed(call: FaultCall): void {
    if (this.crashed) throw this.fault(call, 'store crashed', { crashed: true });
  }

  private failureFor(plan: Plan): Error {
    const custom = plan.failure?.options.error;
    if (custom) {
      this.injected++;
      return custom(plan.call);
    }
    return this.fault(plan.call, 'injected fault', {});
  }

  private fault(call: FaultCall, what: string, extra: Record<string, boolean>): StoreUnavailableError {
    this.injected++;
    return new StoreUnavailableError(`${what}. op=${call.op} key=${call.key}`, { injected: true, op: call.op, key: call.key, ...extra });
  }
}
