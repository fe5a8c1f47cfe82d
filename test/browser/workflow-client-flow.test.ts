/**
 * The page's `client.start` with flow control (in Node, over fake calls): the options and the
 * workflow's defaults (keys computed from the input, on the page) reach the submission, and a
 * debounced start that joined another run's window gets that run's handle and its events.
 */
import { describe, expect, it } from 'vitest';
import { createWorkflowClient, type WorkflowCalls } from '../../src/browser/workflow-client.js';
import type { RunSpec } from '../../src/core/workflow/index.js';
import { defineWorkflow } from '../../src/core/workflow/index.js';

function fakeCalls(answerRunId?: string): { calls: WorkflowCalls; specs: RunSpec[]; followed: (string | undefined)[] } {
  const specs: RunSpec[] = [];
  const followed: (string | undefined)[] = [];
  const calls = {
    submit: async (spec: RunSpec) => {
      specs.push(spec);
      return { runId: answerRunId ?? spec.runId!, newlySubmitted: true, jobId: 'j' };
    },
    info: async () => ({ workflows: [{ name: 'sync', version: 1 }, { name: 'save', version: 1 }] }),
    subscribe: (_listener: unknown, filter?: { runId?: string }) => {
      followed.push(filter?.runId);
      return () => undefined;
    },
  } as unknown as WorkflowCalls;
  return { calls, specs, followed };
}

const sync = defineWorkflow({
  name: 'sync',
  concurrency: { key: (job: { user: string }) => job.user, limit: 1 },
  run: async (_ctx, job: { user: string }) => job.user,
});

const save = defineWorkflow({
  name: 'save',
  debounce: { key: (doc: { id: string; text: string }) => doc.id, periodMs: 500 },
  run: async (_ctx, doc: { id: string; text: string }) => doc.text,
});

describe('client.start with flow control', () => {
  it('sends the workflow defaults computed from the input, and the start options over them', async () => {
    const { calls, specs } = fakeCalls();
    const client = createWorkflowClient(calls);
    await client.start(sync, { user: 'ann' });
    await client.start(sync, { user: 'ann' }, { concurrency: { key: 'all', limit: 3 }, rateLimit: { key: 'r', limit: 2, periodMs: 1000 } });
    expect(specs.map((s) => [s.concurrency, s.rateLimit])).toEqual([
      [{ key: 'ann', limit: 1 }, undefined],
      [{ key: 'all', limit: 3 }, { key: 'r', limit: 2, periodMs: 1000 }],
    ]);
  });

  it('a debounced start that joined a window gets the window run handle and follows its events', async () => {
    const { calls, specs, followed } = fakeCalls('window-run');
    const client = createWorkflowClient(calls);
    const run = await client.start(save, { id: 'doc-1', text: 'v2' }, { onEvent: () => undefined });
    expect(specs[0]!.debounce).toEqual({ key: 'doc-1', periodMs: 500 });
    expect(run.runId).toBe('window-run');
    expect(followed).toEqual([specs[0]!.runId, 'window-run']);
  });
});
