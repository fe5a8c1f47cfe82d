/**
 * Type tests of the page client: it is derived from the worker facade (`HostApi`), so every
 * operation keeps its arguments and resolves with the facade's result type. Checked by `tsc`
 * (npm run typecheck).
 */
import { expectTypeOf } from 'vitest';
import type { HostApi, HostEvent, RunPage, RunView, WorkflowClient } from '../../../src/browser/index.js';
import type { FinishedRun, RunSpec, SignalOutcome, SubmitOutcome } from '../../../src/core/workflow/index.js';

// The job operations are on `client.jobs`; `runWait` is carried by `client.result`.
type Operation = Exclude<keyof HostApi, 'openEvents' | 'close' | 'jobSubmit' | 'jobWait' | 'jobFetch' | 'jobCancel' | 'runWait'>;

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
