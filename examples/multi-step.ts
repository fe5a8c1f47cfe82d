/**
 * multi_step: a run that counts from its input to a target, one step per increment. Each step
 * parses "<current>/<target>" from its payload and continues with "<next>/<target>" until it
 * reaches the target; the payload is the only state carried between steps. A header submitted
 * with the run (trace_id) reaches every step and the terminal outcome.
 *
 *   npm run example:multi-step
 */
import { MemoryObjectStore, Queue, StepError, StepOutcome, WorkflowRuntime, type RunOutcome, type Step, type TerminalHook } from 'taquba-workflow';

// Text in and out of the runtime's byte payloads.
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const fromUtf8 = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

async function countStep(step: Step): Promise<StepOutcome> {
  const [current, target] = fromUtf8(step.payload).split('/').map(Number);
  if (!Number.isInteger(current) || !Number.isInteger(target)) throw StepError.permanent(`payload is not "<current>/<target>": ${fromUtf8(step.payload)}`);
  const next = current + 1;
  console.log(`step ${step.stepNumber} for run ${step.runId}: ${current} -> ${next} (target ${target})`);
  if (next >= target) return StepOutcome.succeed(utf8(`reached ${next}`));
  return StepOutcome.continueNow(utf8(`${next}/${target}`));
}

const store = new MemoryObjectStore();
const queue = await Queue.open(store, 'demo');
const stop = new AbortController();

const report: TerminalHook = {
  async onTermination(o: RunOutcome) {
    const result = o.result ? JSON.stringify(fromUtf8(o.result)) : 'none';
    console.log(`completion: run=${o.runId} status=${o.status} final_step=${o.finalStep} result=${result} trace=${o.headers.trace_id ?? 'none'}`);
    stop.abort();
  },
};

const runtime = new WorkflowRuntime(queue, store, countStep, report, { maxConcurrentSteps: 4, pollIntervalMs: 50 });
const { runId } = await runtime.submit({ input: utf8('0/5'), headers: { trace_id: 'demo-trace' } });
console.log(`submitted run ${runId}`);
const worker = runtime.spawn(stop.signal);
await worker.done;
await queue.close();
