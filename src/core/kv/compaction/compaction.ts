/**
 * Size-tiered compaction: when there are more than `maxRuns` runs, merge the newest runs whose
 * combined size is comparable to the next older one. Sizes then grow geometrically, so a key is
 * rewritten O(log n) times. Tombstones and merge chains are resolved only when the merge reaches
 * the oldest run, since an older run could still hold a version a tombstone must hide.
 */
import { compareBytes } from '../../bytes.js';
import type { VersionedEntry } from '../entry.js';
import type { SortedRun } from '../manifest/manifest.js';
import { resolveChain } from '../merge-resolution.js';
import type { SstReader } from '../tables/sst-reader.js';
import type { MergeOperator } from '../types.js';

function runBytes(run: SortedRun): number {
  return run.reduce((n, t) => n + t.size, 0);
}

/** Indexes [0, end) of the newest runs to merge, or undefined when no compaction is due. */
export function pickCompaction(runs: readonly SortedRun[], maxRuns: number): { end: number } | undefined {
  if (runs.length <= maxRuns) return undefined;
  let sum = runBytes(runs[0]);
  let end = 1;
  while (end < runs.length && (end < 2 || sum * 2 >= runBytes(runs[end]))) {
    sum += runBytes(runs[end]);
    end++;
  }
  return { end };
}

/** Merges runs (newest first) into one ascending stream with one entry per key. */
export async function* mergeRuns(
  runs: readonly (readonly SstReader[])[],
  merge: MergeOperator | undefined,
  atBottom: boolean,
  shouldStop: () => boolean,
): AsyncGenerator<VersionedEntry> {
  const cursors = runs.map((run) => iterateRun(run));
  const heads: (VersionedEntry | undefined)[] = [];
  for (const c of cursors) heads.push((await c.next()).value ?? undefined);
  for (;;) {
    if (shouldStop()) return;
    let min: Uint8Array | undefined;
    for (const h of heads) if (h && (min === undefined || compareBytes(h.key, min) < 0)) min = h.key;
    if (min === undefined) return;
    const chain: VersionedEntry[] = [];
    for (let i = 0; i < cursors.length; i++) {
      const h = heads[i];
      if (!h || compareBytes(h.key, min) !== 0) continue;
      chain.push(h);
      heads[i] = (await cursors[i].next()).value ?? undefined;
    }
    const resolved = resolveChain(min, chain, merge, atBottom);
    if (atBottom && resolved.kind === 'delete') continue;
    yield { ...resolved, key: min.slice(), value: resolved.value.slice() };
  }
}

async function* iterateRun(run: readonly SstReader[]): AsyncGenerator<VersionedEntry> {
  for (const table of run) yield* table.iterate(undefined, false, false);
}
