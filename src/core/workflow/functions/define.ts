/**
 * `defineWorkflow`: a workflow written as one async function. The value it returns is what a
 * runtime registers (`new WorkflowRuntime(queue, store, { workflows: [w] })`) and what
 * `runtime.start(w, input)` takes, so the input and output types flow from the definition.
 *
 * Versions: a run records the version of the definition it started on and always continues on
 * that version. To change a workflow under running runs, register the new definition beside the
 * old one (same name, higher `version`); new starts take the version passed to `start`, and runs
 * in flight finish on the code they began with. Remove the old definition once no run uses it.
 */
import { InvalidArgumentError } from '../../errors.js';
import { show } from '../../show.js';
import type { WorkflowContext } from './context.js';
import { checkStepOptions, type StepOptions } from './step-options.js';
import { checkFlowDefaults, type WorkflowFlowDefaults } from './flow-defaults.js';

/** What `defineWorkflow` takes. `concurrency`, `rateLimit` and `debounce` are defaults of every start (flow-defaults.ts). */
export interface WorkflowDefinition<I, O> extends WorkflowFlowDefaults<I> {
  /** 1..100 characters of `[A-Za-z0-9_.-]`; names the workflow in the store, the CLI and the inspector. */
  readonly name: string;
  /** A positive integer, default 1. See the module comment on changing a workflow. */
  readonly version?: number;
  /**
   * The workflow. Code outside `ctx.step` runs again on replay (after a crash, a reload, a durable
   * sleep or wait), so it must make the same `ctx` calls in the same order every time: keep I/O,
   * clocks and randomness in steps or in `ctx.now()` / `ctx.random()` / `ctx.uuid()`.
   */
  readonly run: (ctx: WorkflowContext, input: I) => Promise<O>;
  /** Defaults of every `ctx.step` of this workflow (each step may override them). */
  readonly steps?: StepOptions;
}

/** A defined workflow: register it on a runtime, start it with `runtime.start`. */
export interface Workflow<I = unknown, O = unknown> {
  readonly name: string;
  readonly version: number;
  /** @internal */
  readonly run: (ctx: WorkflowContext, input: I) => Promise<O>;
  /** @internal */
  readonly stepDefaults: StepOptions;
  /** @internal */
  readonly flowDefaults: WorkflowFlowDefaults<I>;
  /** @internal Carries the types (never set). */
  readonly types?: { readonly input: I; readonly output: O };
}

/** The input type of a workflow value. */
export type WorkflowInput<W> = W extends Workflow<infer I, unknown> ? I : never;
/** The output type of a workflow value. */
// `any` input: `run` takes the input as a parameter, so a Workflow<Order, O> is not a Workflow<unknown, O>.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type WorkflowOutput<W> = W extends Workflow<any, infer O> ? O : never;

/** A workflow of any input and output (what a runtime registers). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a registry holds workflows of every input type
export type AnyWorkflow = Workflow<any, any>;

const NAME = /^[A-Za-z0-9_.-]{1,100}$/;

function invalid(message: string, field: string): InvalidArgumentError {
  return new InvalidArgumentError(message, { reason: 'invalid_workflow', field });
}

/**
 * Defines a workflow. Throws INVALID_ARGUMENT (reason `invalid_workflow`, `details.field`) for a
 * bad name, version, `run` or step defaults.
 * @example
 * const greet = defineWorkflow({
 *   name: 'greet',
 *   async run(ctx, name: string) {
 *     const text = await ctx.step('compose', () => `hello ${name}`);
 *     return text.toUpperCase();
 *   },
 * });
 */
export function defineWorkflow<I = void, O = unknown>(definition: WorkflowDefinition<I, O>): Workflow<I, O> {
  if (typeof definition !== 'object' || definition === null) throw invalid(`a workflow definition must be an object. definition=${show(definition)}`, 'definition');
  const { name, version = 1, run, steps = {}, concurrency, rateLimit, debounce } = definition;
  if (typeof name !== 'string' || !NAME.test(name)) throw invalid(`workflow name must be 1..100 characters of [A-Za-z0-9_.-]. name=${show(name)}`, 'name');
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) throw invalid(`workflow version must be an integer of at least 1. version=${show(version)}`, 'version');
  if (typeof run !== 'function') throw invalid(`workflow run must be an async function (ctx, input) => output. run=${show(run)}`, 'run');
  try {
    checkStepOptions(steps, `workflow ${name} steps`);
  } catch (e) {
    // The documented shape of a definition error (reason invalid_workflow, the field), with the option.
    if (e instanceof InvalidArgumentError) throw new InvalidArgumentError(e.message, { ...e.details, reason: 'invalid_workflow', field: 'steps' });
    throw e;
  }
  const flowDefaults = { ...(concurrency && { concurrency }), ...(rateLimit && { rateLimit }), ...(debounce && { debounce }) };
  try {
    checkFlowDefaults(flowDefaults);
  } catch (e) {
    if (e instanceof InvalidArgumentError) throw new InvalidArgumentError(`workflow ${name}: ${e.message}`, { ...e.details, reason: 'invalid_workflow' });
    throw e;
  }
  return Object.freeze({ name, version, run, stepDefaults: steps, flowDefaults });
}

/** What the third argument of `new WorkflowRuntime` is for workflow functions. */
export interface WorkflowSet {
  readonly workflows: readonly AnyWorkflow[];
}

/** Whether a runtime's third argument is a `WorkflowSet` rather than a `StepRunner`. */
export function isWorkflowSet(value: unknown): value is WorkflowSet {
  return typeof value === 'object' && value !== null && 'workflows' in value && !('runStep' in value);
}

/** The registered definitions by name and version. */
export class WorkflowRegistry {
  private readonly byName = new Map<string, Map<number, AnyWorkflow>>();

  /** INVALID_ARGUMENT for an empty list, a value that is not a defined workflow, or a name and version given twice. */
  constructor(set: WorkflowSet) {
    const list: unknown = set.workflows;
    if (!Array.isArray(list) || list.length === 0) throw invalid(`workflows must be a non-empty array of defineWorkflow values. workflows=${show(list)}`, 'workflows');
    for (const w of list as unknown[]) {
      if (typeof w !== 'object' || w === null || typeof (w as AnyWorkflow).run !== 'function' || typeof (w as AnyWorkflow).name !== 'string' || !Object.isFrozen(w)) {
        throw invalid(`workflows must hold values made by defineWorkflow. entry=${show(w)}`, 'workflows');
      }
      const workflow = w as AnyWorkflow;
      const versions = this.byName.get(workflow.name) ?? new Map<number, AnyWorkflow>();
      if (versions.has(workflow.version)) throw invalid(`workflow ${workflow.name} version ${workflow.version} is registered twice`, 'workflows');
      versions.set(workflow.version, workflow);
      this.byName.set(workflow.name, versions);
    }
  }

  get(name: string, version: number): AnyWorkflow | undefined {
    return this.byName.get(name)?.get(version);
  }

  /** "name@1, name@2, other@1" for messages. */
  describe(): string {
    return [...this.byName].flatMap(([name, versions]) => [...versions.keys()].map((v) => `${name}@${v}`)).join(', ');
  }

  /** INVALID_ARGUMENT (reason `unknown_workflow`) unless this exact definition is registered. */
  check(workflow: AnyWorkflow): void {
    if (typeof workflow !== 'object' || workflow === null || this.get(workflow.name, workflow.version) !== workflow) {
      const what = typeof workflow === 'object' && workflow !== null ? `${String(workflow.name)}@${String(workflow.version)}` : show(workflow);
      throw new InvalidArgumentError(`workflow ${what} is not registered on this runtime (registered: ${this.describe()})`, { reason: 'unknown_workflow', workflow: what });
    }
  }
}
