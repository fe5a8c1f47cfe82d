/**
 * Commands from another process through the running runtime's inbox (issue 26 part 1): a
 * `RuntimeClient` on the same store submits, signals, cancels and retries while the runtime runs
 * (here in one process over one store; the CLI test does it across real processes), answered
 * with the real outcome, each command applied once.
 */
import { describe, expect, it } from 'vitest';
import { isTaqubaError } from '../../../src/core/errors.js';
import { RuntimeClient } from '../../../src/core/workflow/commands/runtime-client.js';
import { StepOutcome, type Step } from '../../../src/core/workflow/index.js';
import { memoryStore } from '../../support/stores.js';
import { b, kvKeys, makeHarness, RecordingHook, s } from './harness.js';

const memory = memoryStore();
const HOUR = 3_600_000;

async function parked(step: Step): Promise<StepOutcome> {
  if (step.stepNumber === 0) return StepOutcome.continueOnSignal(step.payload, `approve:${step.runId}`, HOUR);
  return StepOutcome.succeed(step.signalPayload ?? b('none'));
}

/** A client whose answers wait on real time while the harness clock stands still (the runtime polls its inbox on that clock). */
async function setup() {
  const h = await makeHarness(memory.factory);
  const hook = new RecordingHook();
  const { runtime } = h.start(parked, hook, { commandPollMs: 5 });
  // The runtime's inbox polls sleep on the mock clock: keep it moving while a call waits.
  const ticker = setInterval(() => void h.clock.advance(5), 2);
  const client = new RuntimeClient(h.store, { path: h.queue.path, pollMs: 5, timeoutMs: 10_000 });
  return { h, hook, runtime, client, done: () => (clearInterval(ticker), client.close()) };
}

describe('RuntimeClient: commands to a running runtime from another process', () => {
  it('submit, signal and cancel answer with the real outcome', async () => {
    const { h, hook, client, done } = await setup();
    try {
      const submitted = await client.submit({ runId: 'by-client', input: b('in') });
      expect([submitted.runId, submitted.newlySubmitted]).toEqual(['by-client', true]);
      expect((await client.submit({ runId: 'by-client', input: b('in') })).newlySubmitted).toBe(false);
      const mismatch = await client.submit({ runId: 'by-client', input: b('other') }).catch((e: unknown) => e);
      expect(isTaqubaError(mismatch, 'INPUT_MISMATCH')).toBe(true);
      expect(['delivered', 'buffered']).toContain(await client.signal('approve:by-client', b('yes')));
      const [outcome] = await hook.waitFor(1);
      expect([outcome!.status, s(outcome!.result!)]).toEqual(['succeeded', 'yes']);
      await client.submit({ runId: 'to-cancel' });
      expect(await client.cancel('to-cancel')).toBe(true);
      await hook.waitFor(2);
      expect(hook.outcomes[1]!.status).toBe('cancelled');
      expect(await client.cancel('to-cancel')).toBe(false);
      expect(await kvKeys(h.queue, 'workflow/runs/')).toEqual([]);
    } finally {
      done();
    }
  });

  it('a command sent again with its id is applied once', async () => {
    const { hook, client, done } = await setup();
    try {
      const first = await client.submit({ runId: 'once', input: b('x') }, { commandId: 'web-req-1' });
      await client.signal('approve:once', b('go'));
      await hook.waitFor(1);
      expect(await client.submit({ runId: 'once', input: b('x') }, { commandId: 'web-req-1' })).toEqual(first);
      expect(hook.outcomes.filter((o) => o.runId === 'once')).toHaveLength(1);
    } finally {
      done();
    }
  });

  it('no runtime serving: TIMEOUT naming the command id; bad input refused before anything is sent', async () => {
    const h = await makeHarness(memory.factory);
    const client = new RuntimeClient(h.store, { path: h.queue.path, pollMs: 1, timeoutMs: 30 });
    const e = await client.signal('k', b('v')).catch((err: unknown) => err);
    expect(isTaqubaError(e, 'TIMEOUT')).toBe(true);
    expect((e as { details: { commandId?: string } }).details.commandId).toMatch(/^[0-9a-z]{9,}-[0-9a-f]{20}$/);
    for (const bad of [client.submit({ runId: 'has space' }), client.cancel(''), client.signal('', b('x')), client.submit({}, { commandId: 'bad id' })]) {
      expect(isTaqubaError(await bad.catch((err: unknown) => err), 'INVALID_ARGUMENT')).toBe(true);
    }
    expect(() => new RuntimeClient(h.store, { path: '' })).toThrow(/path/);
    expect(() => new RuntimeClient(h.store, { path: 'p', timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => new RuntimeClient(h.store, { path: 'p', queue: 'x' } as never)).toThrow(/queue/);
    client.close();
    expect(isTaqubaError(await client.cancel('r').catch((err: unknown) => err), 'CLOSED')).toBe(true);
  });

  it('commandPollMs must be null or a positive number of ms (INVALID_CONFIG naming it)', async () => {
    const h = await makeHarness(memory.factory);
    for (const commandPollMs of [0, -5, Number.NaN, '200', Number.POSITIVE_INFINITY]) {
      expect(() => h.runtime(parked, new RecordingHook(), { commandPollMs } as never), String(commandPollMs)).toThrow(/commandPollMs/);
    }
    expect(() => h.runtime(parked, new RecordingHook(), { commandPollMs: null })).not.toThrow();
  });
});
