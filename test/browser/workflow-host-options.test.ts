/**
 * The browser host's choice of what runs its runs, checked in Node (the host's constructor touches
 * no browser API): exactly one of `runner` and `workflows`, each well formed, else INVALID_CONFIG
 * naming the option; `info().workflows` lists the definitions a worker registers.
 */
import { describe, expect, it } from 'vitest';
import { WorkflowHost } from '../../src/browser/workflow-host.js';
import { defineWorkflow, StepOutcome } from '../../src/core/workflow/index.js';
import { defineJob } from '../../src/core/jobs/index.js';

const wf = defineWorkflow({ name: 'w', version: 3, run: async () => 1 });
const runner = async () => StepOutcome.succeed(new Uint8Array());

function configError(options: unknown): unknown {
  try {
    new WorkflowHost(options as never);
  } catch (e) {
    return e;
  }
  throw new Error('expected INVALID_CONFIG');
}

describe('WorkflowHost: runner or workflows', () => {
  it('INVALID_CONFIG for neither, both, a runner that is not one, workflows not from defineWorkflow', () => {
    const base = { store: 'indexeddb', name: 'app' };
    expect(configError(base)).toMatchObject({ code: 'INVALID_CONFIG', details: { option: 'runner' }, message: expect.stringContaining('exactly one of runner') });
    expect(configError({ ...base, runner, workflows: [wf] })).toMatchObject({ code: 'INVALID_CONFIG', details: { option: 'workflows' } });
    expect(configError({ ...base, runner: 42 })).toMatchObject({ code: 'INVALID_CONFIG', details: { option: 'runner' } });
    expect(configError({ ...base, workflows: [] })).toMatchObject({ code: 'INVALID_CONFIG', details: { option: 'workflows' } });
    expect(configError({ ...base, workflows: [{ name: 'w', version: 1, run: async () => 1 }] })).toMatchObject({ code: 'INVALID_CONFIG', details: { option: 'workflows' } });
    expect(configError({ ...base, workflows: [wf, wf] })).toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringContaining('registered twice') });
  });

  it('info() names the registered workflows; null for a runner', async () => {
    const fn = new WorkflowHost({ store: 'indexeddb', name: 'app', workflows: [wf] });
    expect((await fn.info()).workflows).toEqual([{ name: 'w', version: 3 }]);
    const plain = new WorkflowHost({ store: 'indexeddb', name: 'app', runner });
    expect((await plain.info()).workflows).toBeNull();
  });
});

describe('WorkflowHost: schedules', () => {
  it('checks its schedules in the constructor, against its workflows, jobs and queue names (not in a leader, which would fail after every takeover)', () => {
    const job = defineJob({ name: 'j', run: async (n: number) => n });
    const base = { store: 'indexeddb', name: 'app', workflows: [wf], jobs: [job] } as const;
    expect(() => new WorkflowHost({ ...base, schedules: [{ name: 'nightly', cron: '0 3 * * *', timezone: 'Europe/Paris', start: [wf, undefined] }, { name: 'j', cron: '*/5 * * * *', job: [job, 1] }] })).not.toThrow();
    const other = defineWorkflow({ name: 'other', run: async () => 1 });
    expect(configError({ ...base, schedules: [{ name: 'a', cron: '* * * * *', start: [other, undefined] }] })).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unknown_workflow' } });
    expect(configError({ ...base, schedules: [{ name: 'a', cron: '61 * * * *', start: [wf, undefined] }] })).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_cron_expression' } });
    expect(configError({ ...base, jobs: [], schedules: [{ name: 'a', cron: '* * * * *', job: [job, 1] }] })).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_schedule' } });
    expect(configError({ ...base, schedules: 'nightly' })).toMatchObject({ code: 'INVALID_CONFIG', details: { option: 'schedules' } });
  });
});
