/**
 * The test app's typed jobs: registered by the worker (app-worker.ts), and imported by the page
 * and the tests, which use only their names and codecs (the `run` functions execute in the worker).
 */
import { defineJob } from '../../../../src/core/jobs/index.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Greets after `delayMs`; the output carries a Date and a Map, which the value codec keeps. With
 * `log`, reports each start as `{ type: 'job', jobId }` on that BroadcastChannel.
 */
export const greet = defineJob({
  name: 'test.greet',
  run: async (input: { readonly name: string; readonly delayMs?: number; readonly log?: string }, ctx) => {
    if (input.log) {
      const channel = new BroadcastChannel(input.log);
      channel.postMessage({ type: 'job', jobId: ctx.id });
      channel.close();
    }
    // Real time is the subject: a job that takes a while, so a reload or a routed call lands while it runs.
    if (input.delayMs) await sleep(input.delayMs);
    return { greeting: `hello ${input.name}`, at: new Date(0), tags: new Map([['job', ctx.id]]) };
  },
});

/** The job's own typed failure: always `ctx.fail` with a payload. */
export const refuse = defineJob<{ readonly code: number }, string, { readonly code: number; readonly why: string }>({
  name: 'test.refuse',
  run: (input, ctx) => ctx.fail({ code: input.code, why: 'refused' }),
});

/** Runs until cancelled: its `ctx.signal` ends it. */
export const hang = defineJob({
  name: 'test.hang',
  run: (_: null, ctx) => new Promise<never>((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
});
