/**
 * The store the CLI's queue tests read: an fs store at path `app` written in-process by two
 * runtimes on one queue handle, on queues `workflow-steps` and `approvals`, running `step`.
 */
import { Queue } from '../../src/core/queue/index.js';
import { WorkflowRuntime, type Step, type StepOutcome } from '../../src/core/workflow/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';

export async function openTwoQueueWriter(root: string, step: (s: Step) => Promise<StepOutcome>) {
  const store = new FileSystemObjectStore({ root });
  const queue = await Queue.open(store, 'app', { logger: false });
  const hook = { onTermination: async () => undefined };
  const runtimes = {
    'workflow-steps': new WorkflowRuntime(queue, store, step, hook, { logger: false }),
    approvals: new WorkflowRuntime(queue, store, step, hook, { queueName: 'approvals', logger: false }),
  };
  const workers = Object.values(runtimes).map((r) => r.spawn());
  /** Stops the workers and closes the queue (the writer lock goes). */
  const close = async (): Promise<void> => {
    await Promise.all(workers.map((w) => w.shutdown()));
    await queue.close();
  };
  return { queue, runtimes, close };
}
