/**
 * Runner state (reference `JobRunner::state` / `JobContext::state` / `try_state`): values a runner
 * provides, read in handlers by typed key; a missing value is a typed, permanent error instead of
 * the reference's panic.
 */
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { createRuntimeHost, defineJob, defineState, isTaqubaError, JobFailedError, JobRunner, MemoryObjectStore, provideState, Queue, StepOutcome } from '../../../src/index.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(options: ConstructorParameters<typeof JobRunner>[2] = {}) {
  const store = new MemoryObjectStore();
  const queue = await Queue.open(store, 'app', { logger: false, schedulerIntervalMs: 10, queueConfigs: { jobs: { retryBackoffBaseMs: 1, retryBackoffMaxMs: 5 } } });
  cleanups.push(async () => queue.close().catch(() => undefined));
  const runner = new JobRunner(queue, store, { pollIntervalMs: 10, logger: false, ...options });
  return { store, queue, runner };
}

interface Greeter {
  greet(name: string): string;
}
const GreeterKey = defineState<Greeter>('greeter');
const Prefix = defineState<string>('prefix');

let attempts = 0;
const hello = defineJob({
  name: 'state.hello',
  run: async ({ name }: { name: string }, ctx) => {
    attempts++;
    const prefix = ctx.tryState(Prefix) ?? '';
    return `${prefix}${ctx.state(GreeterKey).greet(name)}`;
  },
});

describe('runner state', () => {
  it('hands provided values to handlers by key; tryState answers undefined for a key without one', async () => {
    const { runner } = await setup();
    runner.register(hello).provide(GreeterKey, { greet: (n) => `hello ${n}` });
    const worker = runner.spawn();
    cleanups.push(() => worker.shutdown());
    expect(await (await runner.submit(hello, { name: 'ada' })).result()).toBe('hello ada');
    // Provided after spawn: read at run time.
    runner.provide(Prefix, '> ');
    expect(await (await runner.submit(hello, { name: 'bob' })).result()).toBe('> hello bob');
  });

  it('takes values through the state option, also for the runner a host builds', async () => {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'app', { logger: false });
    cleanups.push(() => queue.close());
    const host = createRuntimeHost(queue, store, {
      runner: async () => StepOutcome.succeed(new Uint8Array()),
      jobs: [hello],
      jobRunnerOptions: { logger: false, pollIntervalMs: 10, state: [provideState(GreeterKey, { greet: (n) => `hi ${n}` }), provideState(Prefix, '* ')] },
    });
    const worker = host.spawn();
    cleanups.push(() => worker.shutdown());
    expect(await (await host.jobs!.submit(hello, { name: 'cy' })).result()).toBe('* hi cy');
  });

  it('a missing value fails the job at once with the key named (INVALID_CONFIG missing_state: permanent, one attempt)', async () => {
    const { runner } = await setup({ maxAttempts: 5 });
    runner.register(hello);
    const worker = runner.spawn();
    cleanups.push(() => worker.shutdown());
    attempts = 0;
    const failed = await (await runner.submit(hello, { name: 'dee' })).result().catch((e: unknown) => e);
    expect(isTaqubaError(failed, 'JOB_FAILED')).toBe(true);
    expect((failed as JobFailedError).reason).toBe('error');
    expect((failed as JobFailedError).message).toContain('state=greeter');
    expect(attempts).toBe(1);
  });

  it('rejects bad keys and a second value for one key with typed errors', async () => {
    const { runner, queue, store } = await setup();
    expect(() => defineState('')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', details: expect.objectContaining({ reason: 'invalid_state_key' }) }));
    expect(() => defineState('x'.repeat(201))).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => runner.provide({ name: 'forged' } as never, 1)).toThrow(expect.objectContaining({ details: expect.objectContaining({ reason: 'invalid_state_key' }) }));
    expect(() => provideState({} as never, 1)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    runner.provide(Prefix, 'a');
    runner.provide(Prefix, 'a'); // the same value again: a no-op
    expect(() => runner.provide(Prefix, 'b')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', details: expect.objectContaining({ reason: 'duplicate_state', state: 'prefix' }) }));
    // Two keys with one name are two keys.
    runner.provide(defineState<string>('prefix'), 'c');
    expect(() => new JobRunner(queue, store, { state: {} as never })).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG', details: expect.objectContaining({ option: 'state' }) }));
    expect(() => new JobRunner(queue, store, { state: [null] as never })).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    expect(() => new JobRunner(queue, store, { state: [provideState(Prefix, 'a'), provideState(Prefix, 'b')] })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });

  it('types values by their key', () => {
    expectTypeOf(GreeterKey).toEqualTypeOf<ReturnType<typeof defineState<Greeter>>>();
    defineJob({
      name: 'state.types',
      run: async (_: null, ctx) => {
        expectTypeOf(ctx.state(GreeterKey)).toEqualTypeOf<Greeter>();
        expectTypeOf(ctx.tryState(Prefix)).toEqualTypeOf<string | undefined>();
        return null;
      },
    });
    // @ts-expect-error the value must match the key's type
    provideState(Prefix, 42);
  });
});
