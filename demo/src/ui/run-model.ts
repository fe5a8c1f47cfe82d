/**
 * The page's picture of a run: what the demo's KV records say (metadata, outcome, escalation)
 * and what the runtime reports (`status`). Pure functions over plain data.
 */
import type { RunView } from 'taquba-workflow/browser';
import type { OutcomeRecord, RunMeta } from '../shared/agent-state.js';

export interface RunRow {
  readonly runId: string;
  readonly meta: RunMeta;
  readonly outcome: OutcomeRecord | null;
  readonly view: RunView | null;
  readonly escalated: boolean;
}

export type StatusKind = 'running' | 'waiting' | 'retry' | 'cancelling' | 'succeeded' | 'failed' | 'cancelled' | 'finishing';

export function statusOf(row: RunRow): { kind: StatusKind; text: string } {
  if (row.outcome) {
    const text = { succeeded: 'Succeeded', failed: 'Failed', cancelled: 'Cancelled' }[row.outcome.status];
    return { kind: row.outcome.status, text };
  }
  switch (row.view?.state) {
    case undefined:
      // The run record is gone but the terminal hook's record has not committed yet.
      return { kind: 'finishing', text: 'Finishing' };
    case 'waiting-for-signal':
      return { kind: 'waiting', text: row.escalated ? 'Waiting for approval (escalated)' : 'Waiting for approval' };
    case 'scheduled':
      return { kind: 'retry', text: 'Retry scheduled' };
    case 'cancelling':
      return { kind: 'cancelling', text: 'Cancelling' };
    case 'succeeded':
      return { kind: 'succeeded', text: 'Succeeded' };
    case 'failed':
      return { kind: 'failed', text: 'Failed' };
    case 'cancelled':
      return { kind: 'cancelled', text: 'Cancelled' };
    default:
      return { kind: 'running', text: 'Running' };
  }
}

export const isActive = (row: RunRow): boolean => row.outcome === null && !['succeeded', 'failed', 'cancelled'].includes(row.view?.state ?? '');

/** The name of step `n` of a run (step numbers follow the agent's phases; see agent-runner.ts). */
export function labelForStep(meta: RunMeta, stepNumber: number, escalated: boolean): string {
  const r = meta.researchCalls;
  if (stepNumber < r) return `Research ${stepNumber + 1}/${r}`;
  if (stepNumber === r) return 'Draft';
  if (stepNumber === r + 1) return 'Approval';
  if (stepNumber === r + 2 && escalated) return 'Approval (escalated)';
  return 'Publish';
}

/**
 * The run's steps by number, as far as they are known: the research calls, the draft, the
 * approval (twice once escalated) and the publish step. Steps past the one the run is at are
 * shown by the inspector as still to come.
 */
export function plannedSteps(meta: RunMeta, escalated: boolean): string[] {
  const last = meta.researchCalls + (escalated ? 3 : 2);
  return Array.from({ length: last + 1 }, (_, n) => labelForStep(meta, n, escalated));
}
