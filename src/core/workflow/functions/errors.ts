/**
 * The errors of workflow functions. Each is a `TaqubaError` with its own stable code, because a
 * caller handles each differently: a workflow catches `STEP_FAILED` to compensate, a submitter
 * reads `RUN_FAILED` from `result()`, and `NON_DETERMINISTIC` says the code changed under a run.
 */
import { TaqubaError } from '../../errors.js';

/** A `ctx.step` ran out of attempts. Thrown inside the workflow, the same on every replay. */
export class StepFailedError extends TaqubaError {
  constructor(
    readonly stepName: string,
    readonly attempts: number,
    /** The last attempt's error message (its `name` first when it is not a plain Error). */
    readonly lastError: string,
  ) {
    super('STEP_FAILED', `step ${JSON.stringify(stepName)} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${lastError}`, {
      details: { step: stepName, attempts, lastError },
    });
    this.name = 'StepFailedError';
  }
}

/** How a run that did not succeed ended, as `WorkflowRun.result()` reports it. */
export class RunFailedError extends TaqubaError {
  constructor(
    readonly runId: string,
    readonly status: 'failed' | 'cancelled',
    /** The run's error text (null for a cancel from outside). */
    readonly error: string | null,
  ) {
    super('RUN_FAILED', `run ${status}. runId=${runId}${error === null ? '' : ` error=${error}`}`, { details: { runId, status, error } });
    this.name = 'RunFailedError';
  }
}

/**
 * A replay asked for another operation than the run's history recorded at that position: the
 * workflow's code (or something it reads outside a step) changed between executions.
 */
export class NonDeterminismError extends TaqubaError {
  constructor(runId: string, position: number, recorded: string, requested: string) {
    super(
      'NON_DETERMINISTIC',
      `workflow replay diverged from the run's history at operation ${position}: recorded ${recorded}, requested ${requested}. runId=${runId} ` +
        '(code between steps must make the same calls in the same order on every execution; branch on ctx.version to change a workflow under running runs)',
      { details: { runId, position, recorded, requested } },
    );
    this.name = 'NonDeterminismError';
  }
}
