/**
 * kv_effects: application state committed atomically with the run's own transitions. An order
 * keeps a status row in the queue's key-value namespace: the submission writes "received" and a
 * pending marker together with step 0; step 0 stages "validated"; step 1 stages "fulfilled" and
 * deletes the pending marker. Each step's writes commit in the same transaction as its outcome,
 * so a crash can never leave the row disagreeing with the run.
 *
 *   npm run example:kv-effects
 */
import { MemoryObjectStore, Queue, StepOutcome, WorkflowRuntime, type RunOutcome, type Step } from 'taquba-workflow';

// Text in and out of the runtime's byte payloads.
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const fromUtf8 = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

const ORDER = 'order-1001';
const STATUS = `app/orders/${ORDER}/status`;
const PENDING = `app/orders/${ORDER}/pending`;

async function orderStep(step: Step): Promise<StepOutcome> {
  if (step.stepNumber === 0) {
    // Validation would happen here; the new status commits with this step's settlement.
    step.effects.put(STATUS, utf8('validated'));
    return StepOutcome.continueNow(step.payload);
  }
  step.effects.put(STATUS, utf8('fulfilled'));
  step.effects.delete(PENDING);
  return StepOutcome.succeed(utf8(`fulfilled: ${fromUtf8(step.payload)}`));
}

const store = new MemoryObjectStore();
const queue = await Queue.open(store, 'demo');
const read = async (key: string) => {
  const v = await queue.kvGet(utf8(key));
  return v && fromUtf8(v);
};

let finished!: (o: RunOutcome) => void;
const terminated = new Promise<RunOutcome>((resolve) => (finished = resolve));
const runtime = new WorkflowRuntime(queue, store, orderStep, { onTermination: async (o) => finished(o) });

await runtime.submit({
  runId: ORDER,
  input: utf8('2 units of item 7'),
  kvWrites: [
    [STATUS, utf8('received')],
    [PENDING, utf8('1')],
  ],
});
console.log(`submitted: status = ${await read(STATUS)}`);

const worker = runtime.spawn();
const outcome = await terminated;
console.log(`run terminated: ${outcome.status}`);
// The hook runs after the terminal step's settlement committed, so its effects are visible.
console.log(`final: status = ${await read(STATUS)}`);
console.log(`final: pending marker present = ${(await read(PENDING)) !== undefined}`);
await worker.shutdown();
await queue.close();
