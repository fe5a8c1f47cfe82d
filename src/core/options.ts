/**
 * Unknown-option checks shared by every options object (queue, per-queue config, reader, worker,
 * engine, runtime, stores). Each options object declares its option names once, as a
 * `Record<keyof Options, true>` built with `optionNames`, so adding a field to the interface
 * without adding its name there is a compile error, and adding the name is all a new option
 * needs to pass the check. A misspelled or unknown option rejects with INVALID_CONFIG naming it
 * and the nearest known name, instead of being silently ignored.
 */
import { InvalidConfigError } from './errors.js';

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
 * Throws INVALID_CONFIG unless `options` is undefined or a non-array object whose own keys are all
 * in `known`. `what` names the options object in the message (`queue`, `queueConfigs["q"]`).
 * The message names the unknown option and, when one is close, the known name it resembles
 * (`details.option`, `details.suggestion`).
 */
export function checkOptions(options: unknown, known: readonly string[], what: string): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidConfigError(`${what} options must be an object. value=${describe(options)}`, { where: what, value: describe(options) });
  }
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const suggestion = nearestName(key, known);
    const hint = suggestion === undefined ? `known=${known.join(',')}` : `did_you_mean=${suggestion}`;
    throw new InvalidConfigError(`unknown ${what} option. option=${JSON.stringify(key)} ${hint}`, { where: what, option: key, suggestion: suggestion ?? null });
  }
}
