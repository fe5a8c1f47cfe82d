/**
 * Judges a state read back from the store (key -> value) against the history the clients saw.
 *
 * The engine's history is linear: writers own the store one after another in epoch order, and
 * each contributes a prefix of its commits in commit order (the WAL is ordered, and a newer
 * writer takes over exactly what the older one stored, up to a point). So a state is correct when
 * some choice of one prefix length per writer, with
 *   lo (every acknowledged commit is in) <= prefix <= hi (no not-applied commit is in),
 * applied in epoch order, gives exactly that state. Commit values are unique, so a value names
 * the commit that wrote it. Direct checks come first because they name the broken invariant; the
 * search over prefixes then catches what they cannot (a fork, a reordering).
 */
import type { CommitRecord, WriterRecord } from './history.js';
import { describeCommit, sequenced } from './history.js';

export interface Violation {
  readonly invariant: string;
  readonly message: string;
}

export interface Bounds {
  /** Must be in the history (and so must every commit of its writer before it). */
  required(c: CommitRecord): boolean;
  /** May be in the history (once false, false for every later commit of the writer). */
  allowed(c: CommitRecord): boolean;
}

interface Epoch {
  readonly writer: WriterRecord;
  readonly commits: readonly CommitRecord[];
  readonly lo: number;
  readonly hi: number;
}

/** Search budget (prefix combinations tried) before giving up as inconclusive. */
const SEARCH_BUDGET = 200_000;

export type CheckResult = { readonly ok: true; readonly inconclusive?: boolean } | { readonly ok: false; readonly violation: Violation };

export function checkState(writers: readonly WriterRecord[], state: ReadonlyMap<string, string>, bounds: Bounds, what: string): CheckResult {
  const epochs: Epoch[] = writers
    .filter((w) => w.epoch !== undefined)
    .sort((a, b) => a.epoch! - b.epoch!)
    .map((writer) => {
      const commits = sequenced(writer);
      let lo = 0;
      commits.forEach((c, i) => {
        if (bounds.required(c)) lo = i + 1;
      });
      let hi = commits.findIndex((c) => !bounds.allowed(c));
      if (hi < 0) hi = commits.length;
      return { writer, commits, lo, hi };
    });
  const fail = (invariant: string, message: string): CheckResult => ({ ok: false, violation: { invariant, message: `${what}: ${message}` } });
  const name = (c: CommitRecord): string => describeCommit(c, writers.find((w) => w.index === c.writer)?.name ?? `writer ${c.writer}`);

  for (const e of epochs) {
    if (e.lo > e.hi) {
      return fail('outcomes', `${e.writer.name} has an acknowledged commit after a not-applied one: ${name(e.commits[e.lo - 1]!)} after ${name(e.commits[e.hi]!)}`);
    }
  }

  // Where each commit sits: epoch position and index within it.
  const position = new Map<number, { e: number; i: number }>();
  epochs.forEach((e, ei) => e.commits.forEach((c, i) => position.set(c.id, { e: ei, i })));
  const possible = (e: number, i: number): boolean => i < epochs[e]!.hi;
  /** A possible commit after (e, i) that writes `key`, with the value `want` (undefined: any). */
  const laterWriter = (e: number, i: number, key: string, want?: string | null): CommitRecord | undefined => {
    for (let ej = e; ej < epochs.length; ej++) {
      const commits = epochs[ej]!.commits;
      for (let j = ej === e ? i + 1 : 0; j < epochs[ej]!.hi; j++) {
        const c = commits[j]!;
        if (c.ops.has(key) && (want === undefined || c.ops.get(key) === want)) return c;
      }
    }
    return undefined;
  };

  // 1. Every value was written by a commit that may be in the history.
  const byValue = new Map<string, CommitRecord>();
  for (const e of epochs) for (const c of e.commits) for (const [, v] of c.ops) if (v !== null) byValue.set(v, c);
  for (const [key, value] of state) {
    const c = byValue.get(value);
    if (!c || c.ops.get(key) !== value) return fail('no-phantom-values', `key ${key} holds ${short(value)}, which no commit wrote to it`);
    const at = position.get(c.id)!;
    if (!possible(at.e, at.i)) return fail('not-applied-invisible', `key ${key} holds the value of ${name(c)}, which was rejected as not applied (or not yet issued)`);
  }

  // 2. Acknowledged writes survive unless a commit that may come later replaced them.
  const lost: string[] = [];
  let first: string | undefined;
  for (const [ei, e] of epochs.entries()) {
    for (let i = 0; i < e.lo; i++) {
      const c = e.commits[i]!;
      for (const [key, value] of c.ops) {
        const now = state.get(key);
        if ((value === null ? now === undefined : now === value)) continue;
        if (laterWriter(ei, i, key, now === undefined ? null : now)) continue;
        const required = bounds.required(c) ? 'acknowledged' : `before an acknowledged commit of ${e.writer.name}`;
        first ??= `${required} ${name(c)}: key ${key} should hold ${value === null ? '(deleted)' : short(value)} but holds ${now === undefined ? '(nothing)' : short(now)}`;
        lost.push(`c${c.id}`);
        break;
      }
    }
  }
  if (first) return fail('no-lost-acknowledged-writes', `${first}. Commits lost: ${lost.length} (${lost.slice(0, 12).join(' ')}${lost.length > 12 ? ' ...' : ''})`);

  // 3. Commits are atomic: a visible commit's other keys hold its value or a later one's.
  for (const [key, value] of state) {
    const c = byValue.get(value)!;
    const at = position.get(c.id)!;
    for (const [other, v] of c.ops) {
      if (other === key) continue;
      const now = state.get(other);
      if ((v === null ? now === undefined : now === v)) continue;
      if (laterWriter(at.e, at.i, other, now === undefined ? null : now)) continue;
      return fail('atomic-commits', `${name(c)} is visible at ${key} but key ${other} holds ${now === undefined ? '(nothing)' : short(now)}`);
    }
  }

  // 4. Some prefix per writer explains the whole state (linear history, no fork).
  const search = searchPrefixes(epochs, state);
  if (search === 'inconclusive') return { ok: true, inconclusive: true };
  if (!search) {
    const ranges = epochs.map((e) => `${e.writer.name}(epoch ${e.writer.epoch}) prefix ${e.lo}..${e.hi} of ${e.commits.length}`).join('; ');
    return fail('linear-history', `no prefix of each writer's commits, applied in epoch order, gives this state. ${ranges}`);
  }
  return { ok: true };
}

/** Depth-first search over prefix lengths, checking each key once no later writer can touch it. */
function searchPrefixes(epochs: readonly Epoch[], state: ReadonlyMap<string, string>): boolean | 'inconclusive' {
  const lastToucher = new Map<string, number>();
  epochs.forEach((e, ei) => {
    for (let i = 0; i < e.hi; i++) for (const key of e.commits[i]!.ops.keys()) lastToucher.set(key, ei);
  });
  const settledAfter: string[][] = epochs.map(() => []);
  for (const [key, ei] of lastToucher) settledAfter[ei]!.push(key);
  const current = new Map<string, string | null>();
  let budget = SEARCH_BUDGET;

  const matches = (key: string): boolean => {
    const v = current.get(key);
    const want = state.get(key);
    return v === undefined || v === null ? want === undefined : v === want;
  };
  const visit = (ei: number): boolean | 'inconclusive' => {
    if (ei === epochs.length) return true;
    const e = epochs[ei]!;
    const undo: [string, string | null | undefined][] = [];
    const apply = (c: CommitRecord): void => {
      for (const [key, value] of c.ops) {
        undo.push([key, current.get(key)]);
        current.set(key, value);
      }
    };
    for (let i = 0; i < e.lo; i++) apply(e.commits[i]!);
    let result: boolean | 'inconclusive' = false;
    for (let p = e.lo; p <= e.hi; p++) {
      if (--budget < 0) {
        result = 'inconclusive';
        break;
      }
      if (settledAfter[ei]!.every(matches)) {
        const deeper = visit(ei + 1);
        if (deeper !== false) {
          result = deeper;
          break;
        }
      }
      if (p < e.hi) apply(e.commits[p]!);
    }
    for (let i = undo.length - 1; i >= 0; i--) {
      const [key, value] = undo[i]!;
      if (value === undefined) current.delete(key);
      else current.set(key, value);
    }
    return result;
  };
  return visit(0);
}

function short(v: string): string {
  return v.length > 14 ? `${v.slice(0, 10)}..(${v.length}B)` : v;
}
