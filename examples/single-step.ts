/**
 * single_step: the smallest workflow. One runner that echoes its input as the run's result, an
 * in-memory store, and a terminal hook that prints the outcome and stops the worker.
 *
 *   npm run example:single-step
 */
import { fromUtf8, utf8 } from '../src/core/bytes.js';
import { MemoryObjectStore } from '../src/core/objects/index.js';
import { Queue } from '../src/core/queue/index.js';
import { StepOutcome, WorkflowRuntime, type RunOutcome, type TerminalHook } from '../src/core/workflow/index.js';

const store = new MemoryObjectStore();
const queue = await Queue.open(store, 'demo');
const stop = new AbortController();

const printOutcome: TerminalHook = {
  async onTermination(outcome: RunOutcome) {
    const detail = outcome.result ? fromUtf8(outcome.result) : outcome.error;
    console.log(`run ${outcome.runId} -> ${outcome.status}: ${detail}`);
    stop.abort();
  },
};

const runtime = new WorkflowRuntime(queue, store, async (step) => StepOutcome.succeed(step.payload), printOutcome, { queueName: 'agent-demo' });
await runtime.submit({ input: utf8('hello, world') });
const worker = runtime.spawn(stop.signal);
await worker.done;
await queue.close();
