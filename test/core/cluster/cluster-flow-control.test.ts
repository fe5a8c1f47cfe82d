/**
 * Flow control in a cluster: a run under a flow key submitted without a run id gets an id that
 * routes to the key's shard, so every run of the key meets in one shard's store and the limit
 * holds across members (a caller-chosen id places the run by its id instead).
 */
import { describe, expect, it } from 'vitest';
import { fromUtf8 } from '../../../src/core/bytes.js';
import { shardOfText } from '../../../src/core/cluster/layout.js';
import type { Cluster } from '../../../src/core/cluster/index.js';
import { StepOutcome, type Step } from '../../../src/core/workflow/index.js';
import { clusterWorld, fair, SHARDS } from './cluster-harness.js';

describe('cluster flow control', () => {
  it('runs of one concurrency key submitted from two members land on the key shard and run one at a time', async () => {
    let active = 0;
    let peak = 0;
    const runner = async (step: Step): Promise<StepOutcome> => {
      if (step.stepNumber === 0) peak = Math.max(peak, ++active);
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      if (step.stepNumber === 0) return StepOutcome.continueNow(step.payload);
      active--;
      return StepOutcome.succeed(step.payload);
    };
    const w = clusterWorld();
    const members = [await w.open('a', { runner }), await w.open('b', { runner })];
    await w.until('fair ownership', () => fair(members));
    const [a, b] = members as [Cluster, Cluster];
    const concurrency = { key: 'tenant-7', limit: 1 };
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await w.drive((i % 2 === 0 ? a : b).submit({ input: new TextEncoder().encode(`r${i}`), concurrency }))).runId);
    const shard = shardOfText('tenant-7', SHARDS);
    expect(ids.map((id) => shardOfText(id, SHARDS))).toEqual(ids.map(() => shard));
    await w.until('every run ended', () => w.hook.outcomes.length === 6);
    expect(peak).toBe(1);
    expect(w.hook.outcomes.map((o) => fromUtf8(o.result!)).sort()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
  });
});
