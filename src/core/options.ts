/**
 * Unknown-option checks shared by every options object (queue, per-queue config, reader, worker,
 * engine, runtime, stores). Each options object declares its option names once, as a
 * `Record<keyof Options, true>` built with `optionNames`, so adding a field to the interface
 * without adding its name there is a compile error, and adding the name is all a new option
 * needs to pass the check. A misspelled or unknown option rejects with INVALID_CONFIG naming it
 * and the nearest known name, instead of being silently ignored.
 */
import { InvalidArgumentError, InvalidConfigError, type ErrorDetails } from './errors.js';

/**
 * The option names of `T`, from a record that must list every key of `T` (so the compiler catches
 * a new option missing from the list).
 */
export function optionNames<T>(names: { readonly [K in keyof Required<T>]: true }): readonly string[] {
  return Object.freeze(Object.keys(names));
}

/** Levenshtein distance (insert, delete, substitute; case-sensitive). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * The known name closest to `name` (case-insensitive edit distance, ties to the earlier name), or
 * undefined when none is within half of `name`'s length (at least 3 edits): a suggestion should look
 * like a typo fix, not a guess.
 */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const lower = name.toLowerCase();
  for (const candidate of known) {
    const d = editDistance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(3, Math.floor(name.length / 2)) ? best : undefined;
}

/** Shortens a value for an option message. */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value === null || value === undefined) return String(value);
  return Object.prototype.toString.call(value);
}

/**
 * Throws INVALID_CONFIG (or `code`) unless `options` is undefined or a non-array object whose own
 * keys are all in `known`. `what` names the options object in the message (`queue`,
 * `queueConfigs["q"]`, `enqueue`). The message names the unknown option and, when one is close,
 * the known name it resembles (`details.option`, `details.suggestion`); `extra` adds details
 * (a `reason`).
 */
export function checkOptions(
  options: unknown,
  known: readonly string[],
  what: string,
  code: 'INVALID_CONFIG' | 'INVALID_ARGUMENT' = 'INVALID_CONFIG',
  extra: ErrorDetails = {},
): void {
  if (options === undefined) return;
  const fail = (message: string, details: ErrorDetails) =>
    code === 'INVALID_CONFIG' ? new InvalidConfigError(message, { ...extra, ...details }) : new InvalidArgumentError(message, { ...extra, ...details });
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw fail(`${what} options must be an object. value=${describe(options)}`, { where: what, value: describe(options) });
  }
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const suggestion = nearestName(key, known);
    const hint = suggestion === undefined ? `known=${known.join(',')}` : `did_you_mean=${suggestion}`;
    throw fail(`unknown ${what} option. option=${JSON.stringify(key)} ${hint}`, { where: what, option: key, suggestion: suggestion ?? null });
  }
}

/**
 * The first rule a number argument breaks, as a phrase for a message (`must be a number`,
 * `must be finite`, `must not be negative`, `must be an integer`), or undefined when it keeps them
 * all. Naming the rule that failed, not all of them, keeps `runAt: -5` from reading as "not finite".
 */
export function numberRule(value: unknown, { integer = false, min = 0 } = {}): string | undefined {
  if (typeof value !== 'number') return `must be a number, not ${value === null ? 'null' : typeof value}`;
  if (Number.isNaN(value)) return 'must be a number, not NaN';
  if (!Number.isFinite(value)) return 'must be finite';
  if (integer && !Number.isSafeInteger(value)) return 'must be an integer';
  if (value < min) return min === 0 ? 'must not be negative' : `must be at least ${min}`;
  return undefined;
}

const STORE_METHODS = ['get', 'put', 'delete', 'list'] as const;

/**
 * Throws INVALID_ARGUMENT (or INVALID_CONFIG for a store passed as an option) unless `store` is
 * an object with the ObjectStore methods, so `open(null)` or a wrong argument order fails with a
 * message naming the argument instead of a TypeError deep inside the engine.
 */
export function checkObjectStore(store: unknown, what = 'store', code: 'INVALID_ARGUMENT' | 'INVALID_CONFIG' = 'INVALID_ARGUMENT'): void {
  const missing =
    typeof store !== 'object' || store === null ? 'all' : STORE_METHODS.filter((m) => typeof (store as Record<string, unknown>)[m] !== 'function').join(',');
  if (missing === '') return;
  const message = `${what} must be an ObjectStore (get, put, delete and list methods). ${what}=${describe(store)} missing=${missing}`;
  const details = { argument: what, value: describe(store), missing };
  throw code === 'INVALID_CONFIG' ? new InvalidConfigError(message, details) : new InvalidArgumentError(message, details);
}
