/**
 * The run operations as a remote client offers them, derived from the core's operation list: the
 * worker client (`connect`) and the HTTP client (`connectHttp`) both build their methods here, so
 * an operation added to `OPERATIONS` reaches both without being named again. Each listed operation
 * becomes a method with the same arguments, sent through the carrier's `send`; the few a client
 * offers in a form of its own (`submit` and `signal` with their page-side forms, `result` for
 * `runWait`, `client.jobs` for the job operations) are added by each client.
 *
 * Platform neutral: no Worker, no Comlink, no fetch.
 */
import { OPERATION_NAMES } from '../core/operations/operation-list.js';
import type { FinishedRunView, OperationName, RuntimeOperations, WireRunSpec } from '../core/operations/operations.js';
import type { RunSpec, SignalOutcome, SubmitOutcome } from '../core/workflow/index.js';

/** Every method of `T` answering a promise of what it answered. */
export type Promised<T> = { [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never };

/** Operations a client reaches through a method of its own: the job operations through `client.jobs`, `runWait` through `result`. */
export const WRAPPED_OPERATIONS = ['jobSubmit', 'jobWait', 'jobFetch', 'jobStatus', 'jobCancel', 'runWait'] as const satisfies readonly OperationName[];
export type WrappedOperation = (typeof WRAPPED_OPERATIONS)[number];
const wrapped: ReadonlySet<OperationName> = new Set(WRAPPED_OPERATIONS);

/** Which events a subscription delivers. */
export interface EventFilter {
  /** Only events of this run (role events always pass). */
  readonly runId?: string;
}

/** The listed operations a client offers as they are. */
export type ListedOperations = Promised<Omit<RuntimeOperations, 'submit' | 'signal' | WrappedOperation>>;

/** The run operations of a remote client: the listed ones, and those in a form of their own. */
export type RemoteOperations = ListedOperations & {
  /** `RuntimeOperations.submit`, taking any iterable of KV writes (an array or a Map). */
  submit(spec: RunSpec): Promise<SubmitOutcome>;
  /**
   * `signal(runId, name, value)`: the signal `name` of a workflow function's run, which its
   * `ctx.waitForSignal(name)` receives as `value` (encoded here with the value codec; a signal sent
   * before the wait is kept for it). INVALID_ARGUMENT (`invalid_run_id`, `invalid_signal_name`,
   * `unstorable_signal_value`), CLOSED, STORE_*.
   */
  signal(runId: string, name: string, value: unknown): Promise<SignalOutcome>;
  /** `RuntimeOperations.signal`: a durable signal on `correlationKey` with a payload of bytes. */
  signal(correlationKey: string, payload: Uint8Array): Promise<SignalOutcome>;
  /**
   * The outcome of run `runId` (`runtime.result`): at once for a run that ended within the outcome
   * retention window, otherwise when the active run ends (asked in chunks, so a wait follows the
   * serving runtime across leader changes and reconnects); look at `status`. Rejects with
   * NOT_FOUND (no active run and no finished-run record under this id), CANCELLED when
   * `options.signal` aborts (the run goes on), INVALID_ARGUMENT for a bad id, CLOSED or STORE_*.
   */
  result(runId: string, options?: { readonly signal?: AbortSignal }): Promise<FinishedRunView>;
};

/** One method per listed operation (all but the wrapped ones, `submit` and `signal`), each a call through `send`. */
export function listedOperations(send: (name: OperationName, args: unknown[]) => Promise<unknown>): ListedOperations {
  const own: ReadonlySet<OperationName> = new Set<OperationName>(['submit', 'signal']);
  return Object.fromEntries(OPERATION_NAMES.filter((name) => !wrapped.has(name) && !own.has(name)).map((name) => [name, (...args: unknown[]) => send(name, args)])) as unknown as ListedOperations;
}

/** A run spec as it crosses a boundary: KV writes (any iterable) as an array, and no `kvWrites` field when none were given. */
export function toWireSpec(spec: RunSpec): WireRunSpec {
  const wire: WireRunSpec = spec.kvWrites === undefined ? { ...spec, kvWrites: undefined } : { ...spec, kvWrites: [...spec.kvWrites] };
  if (wire.kvWrites === undefined) delete (wire as { kvWrites?: unknown }).kvWrites;
  return wire;
}
