/**
 * single_step: the smallest workflow. One runner that echoes its input as the run's result, an
 * in-memory store, and a terminal hook that prints the outcome and stops the worker.
 *
 *   npm run example:single-step
 */
import { MemoryObjectStore, Queue, StepOutcome, WorkflowRuntime, type RunOutcome, type TerminalHook } from 'taquba-workflow';

// Text in and out of the runtime's byte payloads.
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const fromUtf8 = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

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
