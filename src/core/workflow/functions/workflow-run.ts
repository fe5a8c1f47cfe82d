/**
 * `WorkflowRun`: the typed handle `runtime.start` returns. It holds only the run id, so a handle
 * can also be made later for a run started elsewhere (`runtime.workflowRun(workflow, runId)`).
 */
import { decodeValue, encodeValue } from '../../codec.js';
import { InvalidArgumentError, NotFoundError } from '../../errors.js';
import type { FinishedRun } from '../history/finished-runs.js';
import type { RunStatus } from '../registry.js';
import type { RunResultOptions } from '../runs/run-result.js';
import type { TerminalStatus } from '../runs/terminal-hook.js';
import type { CommandOptions } from '../commands/ledger.js';
import type { RunSpec } from '../runs/submit.js';
import type { FlowControl } from '../flow/flow-options.js';
import { resolveFlow } from './flow-defaults.js';
import { RunFailedError } from './errors.js';
import type { AnyWorkflow, WorkflowRegistry } from './define.js';
import { decodeEnvelope, encodeEnvelope } from './envelope.js';

/** The header of a workflow function's run naming its workflow: `<name>@<version>`. */
export const WORKFLOW_HEADER = 'taquba-workflow';

/** The workflow a run's headers name (`WORKFLOW_HEADER`), or undefined. */
export function workflowOfHeaders(headers: Readonly<Record<string, string>>): { name: string; version: number } | undefined {
  const match = /^(.+)@(\d+)$/.exec(headers[WORKFLOW_HEADER] ?? '');
  return match ? { name: match[1]!, version: Number(match[2]) } : undefined;
}

/**
 * Options of `runtime.start`: the `RunSpec` fields that make sense for a typed input.
 * `concurrency`, `rateLimit` and `debounce` override the workflow's defaults field by field.
 */
export interface StartOptions extends FlowControl {
  /** 1..128 characters of `[A-Za-z0-9_-]`; default a fresh time-ordered id. Starting the same id and input again is answered with the run already there. */
  readonly runId?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly priority?: number;
  /** Epoch ms before which the run does not start. */
  readonly runAt?: number;
  /** Caller-KV writes applied atomically with the start (never for a run already there), as `RunSpec.kvWrites`. */
  readonly kvWrites?: RunSpec['kvWrites'];
  /** Makes the start a command applied once (see `WorkflowRuntime.submit`). */
  readonly commandId?: string;
}

/** What a handle needs from the runtime. */
export interface WorkflowRunSource {
  result(runId: string, options?: RunResultOptions): Promise<FinishedRun>;
  readStatus(runId: string, options: { includeFinished: true }): Promise<RunStatus | null>;
  cancel(runId: string, options?: CommandOptions): Promise<boolean>;
}

export class WorkflowRun<O> {
  /** @internal */
  constructor(
    private readonly source: WorkflowRunSource,
    readonly runId: string,
    /** False when `start` found the run already there (same id and input), or finished with `runIdReuse: 'after-retention'`. */
    readonly newlySubmitted: boolean,
    /** How the run had ended, when `start` found it finished (see `SubmitOutcome.finished`). */
    readonly finished?: TerminalStatus,
  ) {}

  /**
   * The workflow's return value, once the run succeeded (at once if it already did). Rejects with
   * RUN_FAILED (`RunFailedError`: failed, with the error text, or cancelled), NOT_FOUND (unknown
   * id, or its outcome already swept; reason `result_not_kept` when the value was over the 64 KiB
   * a finished run keeps), TIMEOUT or CANCELLED (`options`).
   */
  async result(options?: RunResultOptions): Promise<O> {
    const outcome = await this.source.result(this.runId, options);
    if (outcome.status !== 'succeeded') throw new RunFailedError(this.runId, outcome.status, outcome.error);
    if (outcome.result === null) {
      throw new NotFoundError(`run ${this.runId} succeeded but its value (${outcome.resultBytes ?? '?'} bytes) was over the 64 KiB a finished run keeps; the terminal hook receives it whole`, {
        reason: 'result_not_kept',
        runId: this.runId,
      });
    }
    return decodeValue(outcome.result) as O;
  }

  /** Active: pending, running or cancelling; finished: succeeded, failed or cancelled; null when unknown. */
  status(): Promise<RunStatus | null> {
    return this.source.readStatus(this.runId, { includeFinished: true });
  }

  /** Cancels the run (see `WorkflowRuntime.cancel`); false when it was not active. */
  cancel(): Promise<boolean> {
    return this.source.cancel(this.runId);
  }
}

/** The `RunSpec` of a start: the envelope of the workflow and its encoded input. */
export function startSpec(workflow: AnyWorkflow, input: unknown, options: StartOptions): RunSpec {
  let encoded: Uint8Array;
  try {
    encoded = encodeValue(input);
  } catch (e) {
    throw new InvalidArgumentError(`workflow ${workflow.name} input cannot be stored: ${e instanceof Error ? e.message : String(e)}`, { reason: 'unstorable_input', workflow: workflow.name });
  }
  const { commandId: _commandId, concurrency, rateLimit, debounce, ...spec } = options;
  // The header names the workflow wherever the run's headers go: the finished-run record, hooks, webhooks.
  const headers = { ...spec.headers, [WORKFLOW_HEADER]: `${workflow.name}@${workflow.version}` };
  const flow = resolveFlow(workflow.flowDefaults ?? {}, input, { concurrency, rateLimit, debounce });
  return { ...spec, ...flow, headers, input: encodeEnvelope({ name: workflow.name, version: workflow.version, input: encoded }) };
}

/**
 * Checks a submission to a runtime built with `{ workflows }` (a page's `client.start` arrives as
 * one): its input must be a start's envelope of a registered workflow, else the run would only
 * fail in its first step. INVALID_ARGUMENT, reason `not_a_workflow_run` or `unknown_workflow`.
 * A spec without byte input is left to `submit`'s own checks.
 */
export function checkStartSpec(registry: WorkflowRegistry, spec: RunSpec): void {
  const input: unknown = (spec as { input?: unknown } | null)?.input;
  if (!(input instanceof Uint8Array)) return;
  const runId = typeof spec.runId === 'string' ? spec.runId : '(new)';
  const envelope = decodeEnvelope(input, runId);
  // A generation belongs to a later step's payload, never to a start.
  if (envelope.gen !== undefined) throw new InvalidArgumentError(`run ${runId}: the input is a step payload, not a start (use start(workflow, input))`, { reason: 'not_a_workflow_run', runId });
  if (registry.get(envelope.name, envelope.version) === undefined) {
    const what = `${envelope.name}@${envelope.version}`;
    throw new InvalidArgumentError(`workflow ${what} is not registered on this runtime (registered: ${registry.describe()})`, { reason: 'unknown_workflow', workflow: what });
  }
}
