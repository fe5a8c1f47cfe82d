/**
 * The workflow the hand-off tests move from a page's worker (IndexedDB) to a Node backend (fs
 * store, a child process of test/setup/http-host.ts): defined once, registered on both sides and
 * imported by the page. Each step reports where it ran and every execution (start and end) to
 * `stepSite`, which each side wires: the worker to a BroadcastChannel, the backend to a log file
 * the test reads over HTTP. Step `b` can be held at a gate (the backend's gate file), so the
 * backend can be killed in the middle of it.
 */
import { defineWorkflow } from '../../../src/core/workflow/index.js';

export interface StepExecution {
  readonly runId: string;
  readonly step: string;
  readonly phase: 'start' | 'end';
  readonly where: string;
}

/** Where the steps run, and what they report to; set by the side that registers the workflow. */
export const stepSite = {
  where: 'unset',
  report: (_execution: StepExecution): void => undefined,
  /** Resolves when step `b` of `runId` may finish. */
  gate: (_runId: string): Promise<void> => Promise.resolve(),
};

export interface TravelInput {
  readonly name: string;
  /** Hold step `b` at the gate. */
  readonly holdB: boolean;
}

export interface TravelResult {
  /** Where each step ran. */
  readonly a: string;
  readonly b: string;
  readonly c: string;
  readonly greeting: string;
}

/** One step here, a wait for `go` (where the run moves), then two steps wherever it went. */
export const travel = defineWorkflow({
  name: 'travel',
  async run(ctx, input: TravelInput): Promise<TravelResult> {
    const step = (name: string, hold = false): Promise<string> =>
      ctx.step(name, async () => {
        stepSite.report({ runId: ctx.runId, step: name, phase: 'start', where: stepSite.where });
        if (hold) await stepSite.gate(ctx.runId);
        stepSite.report({ runId: ctx.runId, step: name, phase: 'end', where: stepSite.where });
        return stepSite.where;
      });
    const a = await step('a');
    const go = await ctx.waitForSignal<string>('go', { timeoutMs: 600_000 });
    const b = await step('b', input.holdB);
    const c = await step('c');
    return { a, b, c, greeting: `${go.timedOut ? 'Hi' : go.value}, ${input.name}` };
  },
});

/** Channel the page's worker reports its step executions on (one per store name). */
export const stepChannelName = (storeName: string): string => `hand-off-steps:${storeName}`;
