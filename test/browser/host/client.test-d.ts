/**
 * Type tests of the page client: it is derived from the worker facade (`HostApi`), so every
 * operation keeps its arguments and resolves with the facade's result type. Checked by `tsc`
 * (npm run typecheck).
 */
import { expectTypeOf } from 'vitest';
import type { HostApi, HostEvent, RemoteStartOptions, RemoteWorkflowRun, RunEvent, RunPage, RunView, WorkflowClient } from '../../../src/browser/index.js';
import { defineWorkflow, type FinishedRun, type RunSpec, type SignalOutcome, type SubmitOutcome } from '../../../src/core/workflow/index.js';

// The job operations are on `client.jobs`; `runWait` is carried by `client.result`.
type Operation = Exclude<keyof HostApi, 'openEvents' | 'close' | 'jobSubmit' | 'jobWait' | 'jobFetch' | 'jobStatus' | 'jobCancel' | 'runWait'>;

// Every facade operation is on the client, with the same parameters.
expectTypeOf<Pick<WorkflowClient, Operation>>().toHaveProperty('memoGet');
expectTypeOf<Parameters<WorkflowClient['status']>>().toEqualTypeOf<Parameters<HostApi['status']>>();
expectTypeOf<Parameters<WorkflowClient['signal']>>().toEqualTypeOf<Parameters<HostApi['signal']>>();
expectTypeOf<Parameters<WorkflowClient['memoGet']>>().toEqualTypeOf<[runId: string, scope: number | 'run', key: string]>();

// Results are the facade's, as promises.
expectTypeOf<ReturnType<WorkflowClient['submit']>>().toEqualTypeOf<Promise<SubmitOutcome>>();
expectTypeOf<ReturnType<WorkflowClient['status']>>().toEqualTypeOf<Promise<RunView | null>>();
expectTypeOf<ReturnType<WorkflowClient['signal']>>().toEqualTypeOf<Promise<SignalOutcome>>();
expectTypeOf<ReturnType<WorkflowClient['listRuns']>>().toEqualTypeOf<Promise<RunPage>>();
expectTypeOf<ReturnType<WorkflowClient['kvGet']>>().toEqualTypeOf<Promise<Uint8Array | null>>();
expectTypeOf<ReturnType<WorkflowClient['result']>>().toEqualTypeOf<Promise<FinishedRun>>();
expectTypeOf<ReturnType<WorkflowClient['getFinishedRun']>>().toEqualTypeOf<Promise<FinishedRun | null>>();

// The client's submit takes a full RunSpec (any iterable of KV writes), not the wire form.
expectTypeOf<Parameters<WorkflowClient['submit']>>().toEqualTypeOf<[spec: RunSpec]>();

// Worker-only members are not on the client; events arrive through subscribe.
expectTypeOf<WorkflowClient>().not.toHaveProperty('openEvents');
expectTypeOf<Parameters<Parameters<WorkflowClient['subscribe']>[0]>[0]>().toEqualTypeOf<HostEvent>();

// Events are discriminated on `type`.
declare const event: HostEvent;
if (event.type === 'terminal') expectTypeOf(event.status).toEqualTypeOf<'succeeded' | 'failed' | 'cancelled'>();
if (event.type === 'step-started') expectTypeOf(event.attempt).toEqualTypeOf<number>();

// Workflow functions: the handle is typed by the definition the page imports.
declare const client: WorkflowClient;
const summarize = defineWorkflow({
  name: 'summarize',
  async run(ctx, input: { url: string; words: number }) {
    const text = await ctx.step('fetch', () => `text of ${input.url}`);
    return { summary: text.slice(0, input.words), at: new Date(0) };
  },
});
expectTypeOf(client.start(summarize, { url: 'u', words: 3 })).toEqualTypeOf<Promise<RemoteWorkflowRun<{ summary: string; at: Date }>>>();
expectTypeOf<Parameters<typeof client.start<{ url: string; words: number }, { summary: string; at: Date }>>[2]>().toEqualTypeOf<RemoteStartOptions | undefined>();
// @ts-expect-error the input must be the workflow's
void client.start(summarize, { url: 'u' });
// @ts-expect-error a workflow value, not a name
void client.start('summarize', { url: 'u', words: 3 });
const run = client.workflowRun(summarize, 'r1');
expectTypeOf(run).toEqualTypeOf<RemoteWorkflowRun<{ summary: string; at: Date }>>();
expectTypeOf(run.result()).toEqualTypeOf<Promise<{ summary: string; at: Date }>>();
expectTypeOf(run.status()).toEqualTypeOf<Promise<RunView | null>>();
expectTypeOf(run.cancel()).toEqualTypeOf<Promise<boolean>>();
expectTypeOf(run.runId).toEqualTypeOf<string>();
expectTypeOf(run.events()).toEqualTypeOf<AsyncIterableIterator<RunEvent>>();
expectTypeOf<Parameters<Parameters<typeof run.onEvent>[0]>[0]>().toEqualTypeOf<RunEvent>();
// A void-input workflow starts with undefined.
const tick = defineWorkflow({ name: 'tick', run: async () => 1 });
expectTypeOf(client.start(tick, undefined)).toEqualTypeOf<Promise<RemoteWorkflowRun<number>>>();

// signal: a function run's named signal with any value, or a correlation key with bytes.
expectTypeOf(client.signal('r1', 'approve', { ok: true })).toEqualTypeOf<Promise<SignalOutcome>>();
expectTypeOf(client.signal('r1#approve', new Uint8Array(1))).toEqualTypeOf<Promise<SignalOutcome>>();
