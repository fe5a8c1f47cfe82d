/**
 * Type tests of workflow functions (checked by `tsc`, npm run typecheck): the input and output
 * types flow from `defineWorkflow` to `runtime.start` and `WorkflowRun.result()`, `ctx.step`
 * returns its function's type, `waitForSignal<T>` a `SignalResult<T>`.
 */
import { expectTypeOf } from 'vitest';
import {
  defineWorkflow,
  type SignalResult,
  type StepAttempt,
  type Workflow,
  type WorkflowContext,
  type WorkflowInput,
  type WorkflowOutput,
  type WorkflowRun,
  type WorkflowRuntime,
} from '../../../../src/core/workflow/index.js';

interface Order {
  readonly id: string;
  readonly items: readonly string[];
}

const order = defineWorkflow({
  name: 'order',
  async run(ctx, input: Order) {
    // Steps return their function's type, sync or async.
    const count = await ctx.step('count', () => input.items.length);
    expectTypeOf(count).toEqualTypeOf<number>();
    const when = await ctx.step('when', async () => new Date());
    expectTypeOf(when).toEqualTypeOf<Date>();
    const tags = await ctx.step('tags', async ({ signal, attempt }) => {
      expectTypeOf(signal).toEqualTypeOf<AbortSignal>();
      expectTypeOf(attempt).toEqualTypeOf<number>();
      return new Map<string, Set<bigint>>();
    });
    expectTypeOf(tags).toEqualTypeOf<Map<string, Set<bigint>>>();
    const [a, b] = await Promise.all([ctx.step('a', () => 'x' as const), ctx.step('b', () => 1n)]);
    expectTypeOf(a).toEqualTypeOf<'x'>();
    expectTypeOf(b).toEqualTypeOf<bigint>();
    const answer = await ctx.waitForSignal<{ ok: boolean }>('approve', { timeoutMs: 1000 });
    expectTypeOf(answer).toEqualTypeOf<SignalResult<{ ok: boolean }>>();
    if (!answer.timedOut) expectTypeOf(answer.value).toEqualTypeOf<{ ok: boolean }>();
    // @ts-expect-error a timed-out answer has no value
    if (answer.timedOut) void answer.value;
    expectTypeOf(ctx.now()).toEqualTypeOf<number>();
    expectTypeOf(ctx.random()).toEqualTypeOf<number>();
    expectTypeOf(ctx.uuid()).toEqualTypeOf<string>();
    expectTypeOf(ctx.sleep(5)).toEqualTypeOf<Promise<void>>();
    expectTypeOf(ctx.runId).toEqualTypeOf<string>();
    expectTypeOf(ctx.version).toEqualTypeOf<number>();
    return { total: count, id: input.id };
  },
});

// The definition carries its input and output.
expectTypeOf(order).toEqualTypeOf<Workflow<Order, { total: number; id: string }>>();
expectTypeOf<WorkflowInput<typeof order>>().toEqualTypeOf<Order>();
expectTypeOf<WorkflowOutput<typeof order>>().toEqualTypeOf<{ total: number; id: string }>();

declare const runtime: WorkflowRuntime;

// start requires the workflow's input type and returns a handle typed with its output.
expectTypeOf(runtime.start(order, { id: 'o', items: [] })).toEqualTypeOf<Promise<WorkflowRun<{ total: number; id: string }>>>();
// @ts-expect-error the input must be an Order
void runtime.start(order, { id: 1 });
// @ts-expect-error the input is required
void runtime.start(order);
declare const handle: WorkflowRun<{ total: number; id: string }>;
expectTypeOf(handle.result()).toEqualTypeOf<Promise<{ total: number; id: string }>>();
expectTypeOf(runtime.workflowRun(order, 'r')).toEqualTypeOf<WorkflowRun<{ total: number; id: string }>>();

// A workflow without input is started with undefined (start(noInput) without it does not compile: the
// input parameter is generic at the call, so TypeScript does not let a void argument be left out).
const noInput = defineWorkflow({ name: 'tick', run: async (ctx: WorkflowContext) => ctx.now() });
expectTypeOf<WorkflowInput<typeof noInput>>().toEqualTypeOf<void>();
expectTypeOf(runtime.start(noInput, undefined)).toEqualTypeOf<Promise<WorkflowRun<number>>>();

// A step's function receives the attempt.
expectTypeOf<Parameters<WorkflowContext['step']>[1]>().parameter(0).toEqualTypeOf<StepAttempt>();
