/**
 * Run queries on the filesystem store over a real temp directory: the writer's store keeps its
 * default per-engine writer lock, and the reader opens its own store on the same directory (as a
 * second process would); readers take no lock, so it opens beside the live writer.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Queue } from '../../../src/core/queue/index.js';
import { NoopTerminalHook, StepOutcome, WorkflowReader, WorkflowRuntime } from '../../../src/core/workflow/index.js';
import { FileSystemObjectStore } from '../../../src/node/fs-store.js';
import { defineRunQueriesSuite } from './run-queries.suite.js';

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

defineRunQueriesSuite('filesystem store', async () => {
  const root = await mkdtemp(join(tmpdir(), 'taquba-run-queries-'));
  roots.push(root);
  return { writer: new FileSystemObjectStore({ root }), reader: new FileSystemObjectStore({ root }) };
});

describe('run queries beside a locked writer (filesystem store)', () => {
  it('a reader opens and queries while the writer holds the store lock that refuses a second writer', async () => {
    const root = await mkdtemp(join(tmpdir(), 'taquba-run-queries-'));
    roots.push(root);
    const queue = await Queue.open(new FileSystemObjectStore({ root }), 'workflow', { logger: false });
    try {
      const runtime = new WorkflowRuntime(queue, new FileSystemObjectStore({ root }), async (step) => StepOutcome.succeed(step.payload), new NoopTerminalHook(), { logger: false });
      await expect(Queue.open(new FileSystemObjectStore({ root }), 'workflow', { logger: false })).rejects.toMatchObject({ code: 'LOCKED' });
      const reader = await WorkflowReader.open(new FileSystemObjectStore({ root }), 'workflow', { pollIntervalMs: null, logger: false });
      await runtime.submit({ runId: 'beside', input: new Uint8Array([1]) });
      await reader.refresh();
      expect((await reader.listRuns()).runs).toMatchObject([{ runId: 'beside', state: 'pending' }]);
      await reader.close();
    } finally {
      await queue.close();
    }
  });
});
