/**
 * The tab forwarder in Node (BroadcastChannel is a Node global): a write forwarded to a leader
 * that applies it and dies before answering is sent again to the next leader with the same
 * command id, and answered from the record the first application kept (issue 25 part 1).
 */
import { describe, expect, it } from 'vitest';
import { LocalOperations } from '../../src/core/operations/local-operations.js';
import type { OperationCall, RuntimeOperations } from '../../src/browser/protocol.js';
import { TabCoordinator } from '../../src/browser/tab-coordination.js';
import { fromUtf8, utf8 } from '../../src/core/bytes.js';
import { MemoryObjectStore } from '../../src/core/objects/memory-store.js';
import { Queue } from '../../src/core/queue/index.js';
import { NoopTerminalHook, StepOutcome, WorkflowRuntime, type Step } from '../../src/core/workflow/index.js';
import { waitFor } from '../support/wait.js';

const quiet = { warn: () => undefined };
let channels = 0;

function coordinator(channelName: string, hostId: string): TabCoordinator {
  const c = new TabCoordinator({ channelName, hostId, onLeaderChange: () => undefined, onEvent: () => undefined });
  c.start();
  return c;
}

describe('tab forwarding with command ids', () => {
  it('a signal applied by a leader that died before answering is answered by the next leader from the record: delivered once, nothing buffered', async () => {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'tabs', { logger: quiet });
    const seen: string[] = [];
    const runtime = new WorkflowRuntime(
      queue,
      store,
      async (step: Step) => {
        if (step.stepNumber === 0) return StepOutcome.continueOnSignal(step.payload, 'approve', 3_600_000);
        seen.push(fromUtf8(step.signalPayload ?? utf8('none')));
        return StepOutcome.succeed(step.payload);
      },
      new NoopTerminalHook(),
      { logger: quiet, pollIntervalMs: 5, commandPollMs: null },
    );
    const worker = runtime.spawn();
    await runtime.submit({ runId: 'r1' });
    await waitFor(async () => (await runtime.getRun('r1'))?.state === 'waiting-for-signal', 'run r1 parked on its signal');

    const channelName = `forwarding-${++channels}-${Date.now()}`;
    const ops = new LocalOperations(runtime, queue);
    const applied: OperationCall['method'][] = [];
    // The first leader applies the call, then dies before it can post the answer.
    const first = coordinator(channelName, 'leader-1');
    const dying: RuntimeOperations = new Proxy(ops, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          applied.push(name as OperationCall['method']);
          first.close();
          return result;
        };
      },
    });
    first.lead(dying);
    const follower = coordinator(channelName, 'follower');
    const answer = follower.call({ method: 'signal', args: ['approve', utf8('yes')], commandId: 'tab-cmd-1' });
    await waitFor(() => applied.length > 0, 'the first leader to apply the forwarded call');
    expect(applied).toEqual(['signal']);

    const second = coordinator(channelName, 'leader-2');
    second.lead(ops);
    expect(await answer).toBe('delivered');
    await waitFor(() => seen.length > 0, 'the signalled step to run');
    await worker.shutdown();
    expect(seen).toEqual(['yes']);
    expect(await ops.bufferedSignal('approve')).toBeNull();
    follower.close();
    second.close();
    await queue.close();
  });
});
