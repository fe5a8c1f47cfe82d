/**
 * A workflow's default flow control (`defineWorkflow({ concurrency, rateLimit, debounce })`):
 * every start of the workflow gets it unless the start names its own. A key may be a string or
 * a function of the start's input (`(order) => order.customerId`), computed where the start is
 * made (in the page for a page's `client.start`).
 */
import { InvalidArgumentError } from '../../errors.js';
import { checkFlowControl, type FlowControl } from '../flow/flow-options.js';

/** A flow key: fixed, or computed from the start's input. */
export type FlowKey<I> = string | ((input: I) => string);

/** `defineWorkflow`'s flow-control defaults, keys computed from the input where given as functions. */
export interface WorkflowFlowDefaults<I> {
  /** At most `limit` runs of the workflow with the same key active at once (see `RunSpec.concurrency`). */
  readonly concurrency?: { readonly key: FlowKey<I>; readonly limit: number };
  /** At most `limit` starts with the same key per `periodMs` (see `RunSpec.rateLimit`). */
  readonly rateLimit?: { readonly key: FlowKey<I>; readonly limit: number; readonly periodMs: number };
  /** Starts with the same key within `periodMs` of each other become one run (see `RunSpec.debounce`). */
  readonly debounce?: { readonly key: FlowKey<I>; readonly periodMs: number };
}

type AnyDefaults = WorkflowFlowDefaults<never>;

/** Each field with a stand-in for a key function, so everything but the computed keys is checked at definition. */
function withKeys(defaults: AnyDefaults, key: (k: unknown, field: string) => unknown): FlowControl {
  const out: Record<string, unknown> = {};
  for (const field of ['concurrency', 'rateLimit', 'debounce'] as const) {
    const value = defaults[field];
    out[field] = typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value, key: key(value.key, field) } : value;
  }
  return out as FlowControl;
}

/** INVALID_ARGUMENT (reason `invalid_flow_control`) for a default that no start could use. */
export function checkFlowDefaults(defaults: AnyDefaults): void {
  checkFlowControl(withKeys(defaults, (k) => (typeof k === 'function' ? 'computed' : k)));
}

/**
 * The flow control of a start of a workflow with `defaults` and `input`: a field the start's
 * `options` name wins over the default. INVALID_ARGUMENT (reason `invalid_flow_control`) when a
 * key function throws.
 */
export function resolveFlow<I>(defaults: WorkflowFlowDefaults<I>, input: I, options: FlowControl): FlowControl {
  const computed = withKeys(defaults as AnyDefaults, (k, field) => {
    if (typeof k !== 'function') return k;
    try {
      return (k as (input: I) => unknown)(input);
    } catch (e) {
      throw new InvalidArgumentError(`${field}.key of the workflow threw for this input: ${e instanceof Error ? e.message : String(e)}`, { reason: 'invalid_flow_control', field: `${field}.key` });
    }
  });
  const pick = <F extends keyof FlowControl>(field: F): Partial<FlowControl> => {
    const value = options[field] ?? computed[field];
    return value === undefined ? {} : { [field]: value };
  };
  return { ...pick('concurrency'), ...pick('rateLimit'), ...pick('debounce') };
}
