/**
 * Runner state: values a `JobRunner` hands to every job it runs (a database pool, an HTTP client,
 * a model client), so jobs stay plain data and the runner owns the resources. The reference keys
 * state by Rust type; TypeScript types are gone at runtime, so a key is an object made once by
 * `defineState<T>(name)`: its identity is what a lookup matches, its type parameter types the value,
 * its name is for messages only (two keys with one name are two keys).
 *
 * Errors: INVALID_ARGUMENT (`invalid_state_key` for something that is not a key, `duplicate_state`
 * for a second, different value under one key); INVALID_CONFIG (`missing_state`) when a job asks
 * for a value the runner was never given: permanent, so the job fails at once instead of retrying
 * a configuration that will not change.
 */
import { InvalidArgumentError, InvalidConfigError } from '../errors.js';
import { show } from '../show.js';

const STATE_KEY = Symbol.for('taquba-workflow.state-key');
declare const stateType: unique symbol;

/** A typed key of a runner state value (`defineState`). */
export interface StateKey<T> {
  readonly name: string;
  /** Never set: carries `T` (invariantly) for the compiler. */
  readonly [stateType]?: (value: T) => T;
}

/** A value for a runner's `state` option (`provideState(key, value)`, which checks the value's type against the key). */
export interface StateEntry {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly key: StateKey<any>;
  readonly value: unknown;
}

/** Longest state key name. */
export const MAX_STATE_NAME_LEN = 200;

/**
 * A key for one runner state value of type `T`. Define it once (module level) and use the same
 * key to provide the value (`runner.provide(Db, pool)`) and to read it (`ctx.state(Db)`).
 * Throws INVALID_ARGUMENT (reason `invalid_state_key`) for a name that is not 1..200 characters.
 * @example
 * const Db = defineState<Pool>('db');
 */
export function defineState<T>(name: string): StateKey<T> {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_STATE_NAME_LEN) {
    throw new InvalidArgumentError(`state key name must be a string of 1..${MAX_STATE_NAME_LEN} characters. name=${show(name)}`, { reason: 'invalid_state_key' });
  }
  return Object.freeze({ name, [STATE_KEY]: true }) as StateKey<T>;
}

/** A `state` option entry: `key`'s value, type-checked against the key. */
export function provideState<T>(key: StateKey<T>, value: T): StateEntry {
  checkKey(key);
  return Object.freeze({ key, value });
}

function checkKey(key: unknown): asserts key is StateKey<unknown> {
  if (typeof key !== 'object' || key === null || (key as Record<symbol, unknown>)[STATE_KEY] !== true) {
    throw new InvalidArgumentError(`expected a state key from defineState. key=${show(key)}`, { reason: 'invalid_state_key' });
  }
}

/** @internal The values one runner provides, by key identity. */
export class RunnerState {
  private readonly values = new Map<object, unknown>();

  /** Adds `key`'s value; the same value again is a no-op, another one INVALID_ARGUMENT (`duplicate_state`). */
  provide<T>(key: StateKey<T>, value: T): void {
    checkKey(key);
    if (this.values.has(key) && this.values.get(key) !== value) {
      throw new InvalidArgumentError(`the runner already has a different value for this state key. state=${key.name}`, { reason: 'duplicate_state', state: key.name });
    }
    this.values.set(key, value);
  }

  /** `key`'s value; INVALID_CONFIG (`missing_state`) when none was provided. */
  get<T>(key: StateKey<T>, jobName: string): T {
    checkKey(key);
    if (!this.values.has(key)) {
      throw new InvalidConfigError(`the runner has no value for this state key; give it one with runner.provide(key, value) or the state option. state=${key.name} job=${jobName}`, {
        reason: 'missing_state',
        state: key.name,
        job: jobName,
      });
    }
    return this.values.get(key) as T;
  }

  /** `key`'s value, or undefined when none was provided. */
  tryGet<T>(key: StateKey<T>): T | undefined {
    checkKey(key);
    return this.values.get(key) as T | undefined;
  }
}
