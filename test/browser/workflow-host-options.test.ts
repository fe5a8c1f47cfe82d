/**
 * The browser host's choice of what runs its runs, checked in Node (the host's constructor touches
 * no browser API): exactly one of `runner` and `workflows`, each well formed, else INVALID_CONFIG
 * naming the option; `info().workflows` lists the definitions a worker registers.
 */
import { describe, expect, it } from 'vitest';
import { WorkflowHost } from '../../src/browser/workflow-host.js';
import { defineWorkflow, StepOutcome } from '../../src/core/workflow/index.js';

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
