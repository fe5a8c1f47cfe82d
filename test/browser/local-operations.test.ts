/**
 * The leader's `LocalOperations` in Node (no worker needed): the dead-step view it builds from the
 * runtime queue's dead jobs.
 */
import { describe, expect, it } from 'vitest';
import { LocalOperations } from '../../src/browser/local-operations.js';
import { MockClock } from '../../src/core/clock.js';
import { MemoryObjectStore } from '../../src/core/objects/memory-store.js';
import { Queue } from '../../src/core/queue/index.js';
import { HEADER_RUN_ID, HEADER_STEP, NoopTerminalHook, StepOutcome, WorkflowRuntime } from '../../src/core/workflow/index.js';

const quiet = { warn: () => undefined };

describe('LocalOperations.listDeadSteps', () => {
  // One dead step whose payload object was damaged made the whole list reject (CORRUPT_DATA),
  // so the browser's dead-letter panel could not show the broken step.
  it('lists every dead step, flagging the one whose payload object is corrupt, as plain data', async () => {
    const store = new MemoryObjectStore();
    const path = 'local-ops';
    const queue = await Queue.open(store, path, { clock: new MockClock(1_700_000_000_000), reaperIntervalMs: 1e12, schedulerIntervalMs: 1e12, logger: quiet, payloadOffloadThreshold: 16 });
    const runtime = new WorkflowRuntime(queue, store, async () => StepOutcome.succeed(new Uint8Array(0)), new NoopTerminalHook(), { logger: quiet });
    const ops = new LocalOperations(runtime, queue);
    const q = runtime.queueName;
    const bad = await queue.enqueue(q, new Uint8Array(100).fill(1), { headers: { [HEADER_RUN_ID]: 'run-bad', [HEADER_STEP]: '2' } });
    const good = await queue.enqueue(q, new Uint8Array(100).fill(2), { headers: { [HEADER_RUN_ID]: 'run-good', [HEADER_STEP]: '0' } });
    for (let i = 0; i < 2; i++) await queue.deadLetter((await queue.claim(q, 1000))!, 'step failed');
    const object = `${path}-payloads/${(await queue.getJob(bad))!.payloadRef}`;
    const sealed = (await store.get(object))!.data.slice();
    sealed[sealed.length - 1] ^= 0xff;
    await store.put(object, sealed);

    const dead = await ops.listDeadSteps();
    expect(dead).toEqual([
      {
        jobId: bad,
        runId: 'run-bad',
        stepNumber: 2,
        notification: false,
        attempts: 1,
        maxAttempts: expect.any(Number),
        interruptions: 0,
        lastError: 'step failed',
        failedAt: expect.any(Number),
        payloadError: { code: 'CORRUPT_DATA', object, message: `payload object corrupt. object=${object} problem=checksum mismatch` },
      },
      expect.objectContaining({ jobId: good, runId: 'run-good', stepNumber: 0, payloadError: null }),
    ]);
    // Crosses the worker boundary: structured-cloneable.
    expect(structuredClone(dead)).toEqual(dead);
    await queue.close();
  });
});
