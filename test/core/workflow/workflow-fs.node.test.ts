/**
 * The workflow suites on the filesystem store, over a temp directory per test: what the browser
 * and S3 projects run on their stores, here for the store a Node process restarts on (restarts,
 * crash recovery, cancellation of runs an earlier process left parked).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { FileSystemObjectStore } from '../../../src/node/fs-store.js';
import { defineMemoSuite } from './memo.suite.js';
import { defineWorkflowBasicsSuite } from './workflow-basics.suite.js';
import { defineWorkflowEffectsSuite } from './workflow-effects.suite.js';
import { defineWorkflowOutcomesSuite } from './workflow-outcomes.suite.js';
import { defineWorkflowSignalsSuite } from './workflow-signals.suite.js';

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

async function fsStore(): Promise<FileSystemObjectStore> {
  const root = await mkdtemp(join(tmpdir(), 'taquba-workflow-'));
  roots.push(root);
  // The suites reopen queues in this process to simulate crashes (an abandoned writer, then a
  // new one), which the store's writer lock would refuse with LOCKED: it is off here.
  return new FileSystemObjectStore({ root, writerLock: false });
}

defineWorkflowBasicsSuite('filesystem store', fsStore);
defineWorkflowOutcomesSuite('filesystem store', fsStore);
defineWorkflowSignalsSuite('filesystem store', fsStore);
defineWorkflowEffectsSuite('filesystem store', fsStore);
defineMemoSuite('filesystem store', fsStore);
