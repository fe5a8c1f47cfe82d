/**
 * Workflow functions of the browser host tests, imported by the worker (fn-worker.ts), which runs
 * them, and by the test page, which starts them: only a definition's name and version cross.
 * Every step reports that it ran on the BroadcastChannel named in the input (`log`), so a test can
 * count executions of each step across workers.
 */
import { defineWorkflow } from '../../../../src/core/workflow/index.js';

/** Set by the worker that runs the steps (the page never runs one). */
export const stepHost = { hostId: 'page', holdDraft: false };

export interface ReviewInput {
  readonly topic: string;
  /** The log channel the steps report on. */
  readonly log: string;
}

export interface Decision {
  readonly approved: boolean;
  readonly by: string;
}

/** What the steps report. */
export type FnLogEntry =
  | { readonly type: 'fn-step'; readonly host: string; readonly runId: string; readonly step: string; readonly attempt: number }
  | { readonly type: 'fn-holding'; readonly host: string; readonly runId: string };

function report(log: string, entry: FnLogEntry): void {
  const channel = new BroadcastChannel(log);
  channel.postMessage(entry);
  channel.close();
}

/** research, draft (held forever on a worker told to hold it), a wait for `approve`, publish. */
export const review = defineWorkflow({
  name: 'test.review',
  version: 2,
  async run(ctx, input: ReviewInput) {
    const step = (name: string, attempt: number): void => report(input.log, { type: 'fn-step', host: stepHost.hostId, runId: ctx.runId, step: name, attempt });
    const research = await ctx.step('research', ({ attempt }) => {
      step('research', attempt);
      return { notes: [`about ${input.topic}`], found: new Map([['sources', 3]]), at: new Date(0) };
    });
    const draft = await ctx.step('draft', async ({ attempt }) => {
      step('draft', attempt);
      if (stepHost.holdDraft) {
        report(input.log, { type: 'fn-holding', host: stepHost.hostId, runId: ctx.runId });
        // Until the worker dies: a reload in the middle of a step.
        await new Promise<never>(() => undefined);
      }
      return `draft on ${input.topic} from ${research.notes.length} note`;
    });
    const decision = await ctx.waitForSignal<Decision>('approve', { timeoutMs: 60_000 });
    if (decision.timedOut || !decision.value.approved) throw new Error('not approved');
    const published = await ctx.step('publish', ({ attempt }) => {
      step('publish', attempt);
      return `/posts/${ctx.runId}`;
    });
    return { draft, approvedBy: decision.value.by, url: published, sources: research.found.get('sources') ?? 0, at: research.at };
  },
});

/** A step whose first attempt fails (retried 10 ms later), then a wait for `go`: a run that stays to be inspected. */
export const flaky = defineWorkflow({
  name: 'test.flaky',
  async run(ctx) {
    const value = await ctx.step(
      'fetch',
      ({ attempt }) => {
        if (attempt === 1) throw new Error('503 from upstream');
        return `ok on attempt ${attempt}`;
      },
      { retries: 2, backoff: { initialMs: 10 } },
    );
    await ctx.waitForSignal('go', { timeoutMs: 60_000 });
    return value;
  },
});

/** A step that fails its only attempt and is not caught: the run fails. */
export const doomed = defineWorkflow({
  name: 'test.doomed',
  async run(ctx) {
    await ctx.step('boom', () => {
      throw new Error('kaput');
    }, { retries: 0 });
    return 'never';
  },
});
