/**
 * Child runs (`ctx.invoke`). A child is a run of a workflow registered on the same runtime, started
 * under a run id derived from the parent's id and the call's history position, with the header
 * `taquba-parent-run` naming the parent. The parent waits for it as for a signal: when the child
 * ends, the runtime's terminal notification (durable, at least once) sends its outcome to the
 * parent as the signal `taquba.child.<childRunId>`, which wakes the parent's waiting step (or is
 * kept until the parent waits). No polling: the wait costs nothing while the child runs.
 */
import { sha256Hex } from '../../hash.js';
import { utf8 } from '../../bytes.js';
import type { TerminalEffects } from '../steps/effects-handle.js';
import { hookObserves, type RunOutcome, type TerminalHook } from '../runs/terminal-hook.js';
import type { SignalOutcome } from '../runs/signals.js';
import { MAX_RUN_ID_LEN } from '../constants.js';
import type { AnyWorkflow } from './define.js';

/**
 * The header of a child run naming its parent: `<parent run id>/<parent's history generation>`,
 * so a child of an earlier run under a reused parent id is told apart.
 */
export const PARENT_RUN_HEADER = 'taquba-parent-run';

export const parentTag = (parentRunId: string, gen: string): string => `${parentRunId}/${gen}`;
const parentOfTag = (tag: string): string => tag.split('/')[0]!;

/** The signal (of the parent) that carries the outcome of child `childRunId`. */
export const childSignalName = (childRunId: string): string => `taquba.child.${childRunId}`;

/** What a child's outcome signal carries. */
export interface ChildOutcome {
  readonly status: RunOutcome['status'];
  readonly result: Uint8Array | null;
  readonly error: string | null;
}

/** The run id of the child invoked at `position` of run `parentRunId`: readable, else (too long) hashed. */
export async function childRunIdOf(parentRunId: string, position: number): Promise<string> {
  const readable = `${parentRunId}-c${position}`;
  if (readable.length <= MAX_RUN_ID_LEN) return readable;
  return `c-${(await sha256Hex(utf8(readable))).slice(0, 40)}`;
}

/**
 * The hook of a runtime of workflow functions: sends each child's outcome to its parent, then
 * hands the outcome to the app's hook when that hook observes it. Only children's endings (and
 * what the app's hook observes) create a notification job.
 */
export class ChildOutcomeHook implements TerminalHook {
  constructor(
    private readonly inner: TerminalHook,
    private readonly signal: (runId: string, name: string, value: ChildOutcome) => Promise<SignalOutcome>,
  ) {}

  observes(outcome: RunOutcome): boolean {
    return outcome.headers[PARENT_RUN_HEADER] !== undefined || hookObserves(this.inner, outcome);
  }

  async onTermination(outcome: RunOutcome, effects: TerminalEffects): Promise<void> {
    const tag = outcome.headers[PARENT_RUN_HEADER];
    // Sent again on a redelivered notification: the parent took the first one, the second is
    // buffered and discarded when the parent's run ends.
    if (tag !== undefined) await this.signal(parentOfTag(tag), childSignalName(outcome.runId), { status: outcome.status, result: outcome.result, error: outcome.error });
    if (hookObserves(this.inner, outcome)) await this.inner.onTermination(outcome, effects);
  }
}

/** What an execution needs to start children (the runtime's `start` path and finished-run reads). */
export interface ChildStarter {
  /** INVALID_ARGUMENT unless `workflow` is registered on the runtime (and children can be awaited). */
  check(workflow: AnyWorkflow): void;
  /**
   * Starts child `childRunId` of the parent tagged `tag`, unless it already ended (its finished
   * record carries the same tag: its outcome signal is buffered for the parent or on its way).
   * Idempotent while the child runs. INPUT_MISMATCH when another run holds the id. `traceparent`:
   * the parent's delivery span, the child's trace parent (traced runtimes; tracing.ts).
   */
  ensureStarted(workflow: AnyWorkflow, input: unknown, childRunId: string, tag: string, traceparent?: string): Promise<void>;
}
