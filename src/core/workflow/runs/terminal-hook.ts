/**
 * Terminal notifications. When a run's terminal outcome commits, the same transaction enqueues a
 * notification job on the runtime's queue (if the hook `observes` the outcome); the hook runs as
 * that job's worker. So the hook sees only outcomes that committed, at least once: make it
 * idempotent. A `StepError.transient` (or any plain error) retries the notification with the
 * queue's backoff up to its max attempts; a permanent one dead-letters it.
 */
import type { TerminalEffects } from '../steps/effects-handle.js';

export type TerminalStatus = 'succeeded' | 'failed' | 'cancelled';

/** A committed terminal outcome, as delivered to the hook. */
export interface RunOutcome {
  readonly runId: string;
  readonly status: TerminalStatus;
  /** The runner's result; only for `succeeded`. */
  readonly result: Uint8Array | null;
  /**
   * `failed`: the reason or error message. `cancelled`: the runner's reason, or null for an
   * external cancellation (`runtime.cancel`). `succeeded`: null.
   */
  readonly error: string | null;
  /** The submitter's headers (the reserved `workflow.` ones removed). */
  readonly headers: Readonly<Record<string, string>>;
  /** The step that produced the outcome. */
  readonly finalStep: number;
}

export interface TerminalHook {
  /**
   * Handles one termination. Stage KV writes/deletes and follow-up enqueues on `effects`; they
   * apply with the notification's acknowledgement only if this resolves.
   */
  onTermination(outcome: RunOutcome, effects: TerminalEffects): Promise<void>;
  /** Whether to create a notification for this outcome at all. Default: true. */
  observes?(outcome: RunOutcome): boolean;
}

/** Observes nothing: runs terminate without a notification job. */
export class NoopTerminalHook implements TerminalHook {
  async onTermination(): Promise<void> {}

  observes(): boolean {
    return false;
  }
}

/** Whether `hook` wants a notification for `outcome` (a throwing `observes` counts as yes). */
export function hookObserves(hook: TerminalHook, outcome: RunOutcome): boolean {
  if (typeof hook.observes !== 'function') return true;
  try {
    return hook.observes(outcome) !== false;
  } catch {
    return true;
  }
}
