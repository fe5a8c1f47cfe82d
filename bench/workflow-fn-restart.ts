/**
 * The restart of workflow.fn's long function in a new process (fs only): opens the store at
 * argv[2], times `Queue.open`, then `new WorkflowRuntime` + `spawn` until step LONG_STEPS's
 * function is called again (every code path cold, as after a real restart), lets the run finish
 * and prints one JSON line: { open_ms, to_step_ms, step_calls }.
 *
 *   node --import tsx bench/workflow-fn-restart.ts ROOT RUN_ID
 */
import { Queue } from '../src/core/queue/index.js';
import { NoopTerminalHook, WorkflowRuntime } from '../src/core/workflow/index.js';
import { FileSystemObjectStore } from '../src/node/fs-store.js';
import { LONG_STEPS, long, setProbe } from './workflow-fn-long.js';

const [root, runId] = process.argv.slice(2);
if (!root || !runId) throw new Error('usage: workflow-fn-restart.ts ROOT RUN_ID');
const quiet = { warn: (): void => undefined };
let reached!: () => void;
const atStep = new Promise<void>((resolve) => (reached = resolve));
const probe = setProbe({ calls: [], holdAt: LONG_STEPS, hold: Promise.resolve(new Uint8Array(100).fill(5)), onHold: () => reached() });
const store = new FileSystemObjectStore({ root });
const o0 = performance.now();
const queue = await Queue.open(store, 'bench', { logger: quiet });
const openMs = performance.now() - o0;
const t0 = performance.now();
const runtime = new WorkflowRuntime(queue, store, { workflows: [long] }, new NoopTerminalHook(), { logger: quiet });
const worker = runtime.spawn();
await atStep;
const toStepMs = performance.now() - t0;
const value = await runtime.workflowRun(long, runId).result();
await worker.shutdown();
await queue.close();
process.stdout.write(`${JSON.stringify({ open_ms: openMs, to_step_ms: toStepMs, step_calls: probe.calls.filter((t) => t !== undefined).length, value })}\n`);
