/**
 * Workflow functions in a cluster: a member started with `{ workflows }` runs them in its shards;
 * `start`, `signal(runId, name, value)` and the run handle work from any member, also one that
 * does not own the run's shard (the command goes through the owner's inbox, the result is read
 * from the shard's finished-run record).
 */
import { describe, expect, it } from 'vitest';
import { shardOfText } from '../../../src/core/cluster/layout.js';
import type { Cluster } from '../../../src/core/cluster/index.js';
import { defineWorkflow } from '../../../src/core/workflow/index.js';
import { clusterWorld, fair, SHARDS } from './cluster-harness.js';

let stepCalls = 0;
const approve = defineWorkflow({
  name: 'approve',
  async run(ctx, amount: number) {
    const quote = await ctx.step('quote', () => {
      stepCalls++;
      return { amount, fee: amount / 10 };
    });
    const decision = await ctx.waitForSignal<boolean>('decide', { timeoutMs: 60_000 });
    return decision.timedOut ? 'expired' : decision.value ? `approved ${quote.amount + quote.fee}` : 'rejected';
  },
});

function runIdNotOwnedBy(member: Cluster, prefix: string): string {
  const owned = new Set(member.ownedShards());
  for (let i = 0; ; i++) {
    const id = `${prefix}-${i}`;
    if (!owned.has(shardOfText(id, SHARDS))) return id;
  }
}

describe('cluster workflow functions', () => {
  it('start, signal and result from a member that does not own the shard', async () => {
    stepCalls = 0;
    const w = clusterWorld();
    const members = [await w.open('a', { runner: { workflows: [approve] } }), await w.open('b', { runner: { workflows: [approve] } })];
    await w.until('fair ownership', () => fair(members));
    const [a, b] = members as [Cluster, Cluster];
    const runId = runIdNotOwnedBy(a, 'pay');

    const run = await w.drive(a.start(approve, 100, { runId }));
    expect(run.newlySubmitted).toBe(true);
    // The same start again (another member) is the same run.
    expect((await w.drive(b.start(approve, 100, { runId }))).newlySubmitted).toBe(false);
    await w.until('the run waits for its signal', async () => (await a.getRun(runId))?.state === 'waiting-for-signal');
    expect(await w.drive(a.signal(runId, 'decide', true))).toBe('delivered');
    expect(await w.drive(run.result())).toBe('approved 110');
    expect(await w.drive(b.workflowRun(approve, runId).status())).toEqual({ runId, state: 'succeeded', currentStep: 1 });
    expect(stepCalls).toBe(1);
  });

  it('refuses a workflow it was not given, and start on a StepRunner cluster, with INVALID_ARGUMENT', async () => {
    const w = clusterWorld();
    const other = defineWorkflow({ name: 'other', run: async () => 1 });
    const functions = await w.open('a', { runner: { workflows: [approve] } });
    await expect(functions.start(other, undefined)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unknown_workflow' } });
    const plain = await w.open('b');
    await expect(plain.start(approve, 1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unknown_workflow' } });
    await expect(w.open('c', { runner: { workflows: [] } })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_workflow' } });
  });
});
