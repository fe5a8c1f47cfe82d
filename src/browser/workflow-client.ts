/**
 * Workflow functions from the page: `client.start(workflow, input)`, `client.workflowRun(workflow,
 * runId)` and `client.signal(runId, name, value)`. The page imports the same `defineWorkflow`
 * module as the worker; only the definition's name and version cross the boundary. The input is
 * encoded here with the value codec and submitted as the run's start envelope (core `startSpec`),
 * so a start is an ordinary submission, applied once per command id like every other; the result
 * is decoded here. Values that the codec refuses fail on the page, before anything is sent.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { show } from '../core/show.js';
import { createRunIdGenerator, type RunSpec, type SignalOutcome, type SubmitOutcome, type TerminalStatus, type Workflow } from '../core/workflow/index.js';
import { functionSignal } from '../core/workflow/functions/function-runner.js';
import { startSpec, WorkflowRun } from '../core/workflow/functions/workflow-run.js';
import { validateRunId } from '../core/workflow/validation.js';
import type { EventFilter } from './remote-operations.js';
import type { FinishedRunView, HostEvent, HostInfo, RunEvent, RunView } from './protocol.js';

/** Options of `client.start`. */
export interface RemoteStartOptions {
  /** 1..128 characters of `[A-Za-z0-9_-]`; default a fresh time-ordered id, drawn on the page. Starting the same id and input again answers with the run already there. */
  readonly runId?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly priority?: number;
  /** Epoch ms before which the run does not start. */
  readonly runAt?: number;
  /** Caller-KV writes committed with the start, as `runtime.start`'s (applied once: a duplicate start applies none). */
  readonly kvWrites?: RunSpec['kvWrites'];
  /** Flow control per key, as `runtime.start`'s (over the workflow's defaults; key functions run here, on the page). */
  readonly concurrency?: RunSpec['concurrency'];
  readonly rateLimit?: RunSpec['rateLimit'];
  readonly debounce?: RunSpec['debounce'];
  /** Called with every event of the run up to its `terminal` event, subscribed before the start is sent, so none is missed. */
  readonly onEvent?: (event: RunEvent) => void;
}

/** A workflow function's run seen from the page, typed by the workflow's output. */
export interface RemoteWorkflowRun<O> {
  readonly runId: string;
  /** The workflow's name and version, as the definition the handle was made with says. */
  readonly workflow: { readonly name: string; readonly version: number };
  /** False when `start` found the run already there (same id and input), and for `workflowRun`. */
  readonly newlySubmitted: boolean;
  /** How the run had ended, when `start` found it finished (runtime option `runIdReuse: 'after-retention'`). */
  readonly finished?: TerminalStatus;
  /**
   * The workflow's return value, decoded on the page, once the run succeeded (waiting on
   * whichever tab leads, across leader changes). Rejects with RUN_FAILED (`RunFailedError`:
   * failed, with the error text, or cancelled), NOT_FOUND (no run and no kept outcome under this
   * id, or its value was over the 64 KiB a finished run keeps), CANCELLED when `options.signal`
   * aborts (the run goes on), CLOSED or STORE_*.
   */
  result(options?: { readonly signal?: AbortSignal }): Promise<O>;
  /** The run's state (`client.status`): active states, how it ended while its outcome is kept, or null. */
  status(): Promise<RunView | null>;
  /** Cancels the run; false when it was not active. */
  cancel(): Promise<boolean>;
  /**
   * Calls `listener` with the run's events from now on up to its `terminal` event: a
   * `function-call` per `ctx` call as the run records it (`callValue(event.call)` decodes its
   * value), and its executions' steps and signal waits. Returns the unsubscribe.
   */
  onEvent(listener: (event: RunEvent) => void): () => void;
  /** The run's events from now on (see `onEvent`); ends after its `terminal` event, when `signal` aborts, or when the client closes. */
  events(options?: { readonly signal?: AbortSignal }): AsyncIterableIterator<RunEvent>;
}

/** What the workflow client needs of the page client. */
export interface WorkflowCalls {
  submit(spec: RunSpec): Promise<SubmitOutcome>;
  result(runId: string, options?: { readonly signal?: AbortSignal }): Promise<FinishedRunView>;
  status(runId: string): Promise<RunView | null>;
  cancel(runId: string): Promise<boolean>;
  signal(correlationKey: string, payload: Uint8Array): Promise<SignalOutcome>;
  /** The workflows the serving side registers; absent where it cannot say (over HTTP), and the runtime's own submit check answers instead (`unknown_workflow`). */
  info?(): Promise<Pick<HostInfo, 'workflows'>>;
  subscribe(listener: (event: HostEvent) => void, filter?: EventFilter): () => void;
  events(filter?: EventFilter & { readonly signal?: AbortSignal }): AsyncIterableIterator<HostEvent>;
}

/** The page's workflow-function operations, as `connect` puts them on the client. */
export interface WorkflowFunctionsClient {
  start<I, O>(workflow: Workflow<I, O>, input: I, options?: RemoteStartOptions): Promise<RemoteWorkflowRun<O>>;
  workflowRun<I, O>(workflow: Workflow<I, O>, runId: string): RemoteWorkflowRun<O>;
  /** `signal(runId, name, value)`: the value encoded here, sent to the run's correlation key `<runId>#<name>`. */
  signalRun(runId: string, name: string, value: unknown): Promise<SignalOutcome>;
}

/** INVALID_ARGUMENT (reason `unknown_workflow`) for a value that is not a defined workflow. */
function checkWorkflow(workflow: unknown): void {
  const w = workflow as { name?: unknown; version?: unknown } | null;
  if (typeof workflow !== 'object' || w === null || typeof w.name !== 'string' || typeof w.version !== 'number') {
    throw new InvalidArgumentError(`start takes a workflow from defineWorkflow. workflow=${show(workflow)}`, { reason: 'unknown_workflow', workflow: show(workflow) });
  }
}

/** INVALID_ARGUMENT (reason `invalid_signal_name`) unless 1..200 characters, as `ctx.waitForSignal` takes them. */
function checkSignalName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200) {
    throw new InvalidArgumentError(`a signal name must be a string of 1..200 characters. name=${show(name)}`, { reason: 'invalid_signal_name' });
  }
}

/** The run's events from `source`, up to and including its `terminal` event. */
async function* runEvents(source: AsyncIterableIterator<HostEvent>): AsyncGenerator<RunEvent, void, undefined> {
  try {
    for await (const event of source) {
      if (event.type === 'role-changed') continue;
      yield event;
      if (event.type === 'terminal') return;
    }
  } finally {
    await source.return?.();
  }
}

/** Subscribes `listener` to run `runId`'s events until its `terminal` event (delivered) or the unsubscribe. */
function follow(calls: WorkflowCalls, runId: string, listener: (event: RunEvent) => void): () => void {
  const unsubscribe = calls.subscribe((event) => {
    if (event.type === 'role-changed') return;
    if (event.type === 'terminal') unsubscribe();
    listener(event);
  }, { runId });
  return unsubscribe;
}

/** The workflow-function operations over the page client's calls. */
export function createWorkflowClient(calls: WorkflowCalls): WorkflowFunctionsClient {
  const nextRunId = createRunIdGenerator();
  // Every tab runs the same worker module, so this worker's definitions are the leader's.
  let registered: Promise<HostInfo['workflows']> | undefined;
  const workflowsOfWorker = (info: NonNullable<WorkflowCalls['info']>): Promise<HostInfo['workflows']> => {
    registered ??= info().then((answer) => answer.workflows);
    registered.catch(() => (registered = undefined));
    return registered;
  };

  const handle = <O>(workflow: { readonly name: string; readonly version: number }, runId: string, newlySubmitted: boolean, finished?: TerminalStatus): RemoteWorkflowRun<O> => {
    // The core handle decides what a finished run answers (RUN_FAILED, a value not kept, the decoded value).
    const core = new WorkflowRun<O>(
      {
        result: (id, options) => calls.result(id, options),
        readStatus: async (id) => {
          const view = await calls.status(id);
          return view && { runId: id, state: view.state === 'scheduled' || view.state === 'waiting-for-signal' ? 'pending' : view.state, currentStep: view.currentStep };
        },
        cancel: (id) => calls.cancel(id),
      },
      runId,
      newlySubmitted,
      finished,
    );
    return {
      runId,
      workflow: { name: workflow.name, version: workflow.version },
      newlySubmitted,
      ...(finished === undefined ? {} : { finished }),
      result: (options = {}) => core.result({ ...(options.signal === undefined ? {} : { signal: options.signal }) }),
      status: () => calls.status(runId),
      cancel: () => calls.cancel(runId),
      onEvent: (listener) => follow(calls, runId, listener),
      events: (options = {}) => runEvents(calls.events({ runId, ...(options.signal === undefined ? {} : { signal: options.signal }) })),
    };
  };

  return {
    async start<I, O>(workflow: Workflow<I, O>, input: I, options: RemoteStartOptions = {}): Promise<RemoteWorkflowRun<O>> {
      checkWorkflow(workflow);
      const { onEvent, runId = nextRunId(), headers, priority, runAt, kvWrites, concurrency, rateLimit, debounce } = options ?? {};
      // Only the fields given: a submission carries no undefined fields.
      const spec = startSpec(workflow, input, {
        runId,
        ...(headers === undefined ? {} : { headers }),
        ...(priority === undefined ? {} : { priority }),
        ...(runAt === undefined ? {} : { runAt }),
        ...(kvWrites === undefined ? {} : { kvWrites }),
        ...(concurrency === undefined ? {} : { concurrency }),
        ...(rateLimit === undefined ? {} : { rateLimit }),
        ...(debounce === undefined ? {} : { debounce }),
      });
      const workflows = calls.info === undefined ? undefined : await workflowsOfWorker(calls.info);
      const what = `${workflow.name}@${workflow.version}`;
      if (workflows === null) {
        throw new InvalidArgumentError(`the worker runs a StepRunner (serveWorkflowRuntime({ runner })), not workflow functions: serve { workflows: [...] } to start ${what}`, { reason: 'unknown_workflow', workflow: what });
      }
      if (workflows !== undefined && !workflows.some((w) => w.name === workflow.name && w.version === workflow.version)) {
        const names = workflows.map((w) => `${w.name}@${w.version}`).join(', ');
        throw new InvalidArgumentError(`workflow ${what} is not registered in the worker (registered: ${names})`, { reason: 'unknown_workflow', workflow: what });
      }
      // Subscribed before the start is sent, so the run's first events reach the listener.
      const unsubscribe = onEvent === undefined ? undefined : follow(calls, runId, onEvent);
      try {
        const outcome = await calls.submit(spec);
        if (outcome.runId !== runId && onEvent !== undefined) {
          // A debounced start joined another run's window: that run carries this input (not started yet).
          unsubscribe?.();
          follow(calls, outcome.runId, onEvent);
        }
        return handle<O>(workflow, outcome.runId, outcome.newlySubmitted, outcome.finished);
      } catch (e) {
        unsubscribe?.();
        throw e;
      }
    },
    workflowRun<I, O>(workflow: Workflow<I, O>, runId: string): RemoteWorkflowRun<O> {
      checkWorkflow(workflow);
      validateRunId(runId);
      return handle<O>(workflow, runId, false);
    },
    async signalRun(runId, name, value) {
      validateRunId(runId);
      checkSignalName(name);
      const { correlationKey, payload } = functionSignal(runId, name, value);
      return calls.signal(correlationKey, payload);
    },
  };
}
