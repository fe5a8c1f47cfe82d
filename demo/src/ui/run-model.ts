/**
 * The page's picture of the runs: what the demo's KV records say (metadata, finished steps,
 * outcome, escalation), what the runtime reports (`status`), and what the live events of this
 * session added (attempts, retries, the step running now). Pure functions over plain data.
 */
import type { RunEvent, RunView } from 'taquba-workflow/browser';
import type { OutcomeRecord, RunMeta, StepRecord } from '../shared/agent-state.js';

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

/** What this page saw happen to one step since it loaded. */
export interface LiveStep {
  readonly stepNumber: number;
  attempt: number;
  maxAttempts: number;
  /** Earlier deliveries cut off by a reload or crash (they do not use attempts). */
  interruptions: number;
  startedAt: number;
  running: boolean;
  /** Failed attempts, newest last. */
  readonly failures: { attempt: number; error: string }[];
  retryAt: number | null;
  waiting: { correlationKey: string; until: number } | null;
  streamed: string;
}

/** Live step state per run, built from run events. */
export class LiveSteps {
  private readonly runs = new Map<string, Map<number, LiveStep>>();

  of(runId: string): LiveStep[] {
    return [...(this.runs.get(runId)?.values() ?? [])].sort((a, b) => a.stepNumber - b.stepNumber);
  }

  private step(runId: string, stepNumber: number): LiveStep {
    let steps = this.runs.get(runId);
    if (!steps) this.runs.set(runId, (steps = new Map()));
    let step = steps.get(stepNumber);
    if (!step) {
      step = { stepNumber, attempt: 0, maxAttempts: 0, interruptions: 0, startedAt: 0, running: false, failures: [], retryAt: null, waiting: null, streamed: '' };
      steps.set(stepNumber, step);
    }
    return step;
  }

  apply(event: RunEvent): void {
    switch (event.type) {
      case 'step-started': {
        const step = this.step(event.runId, event.stepNumber);
        Object.assign(step, { attempt: event.attempt, maxAttempts: event.maxAttempts, interruptions: event.interruptions, startedAt: event.at, running: true, retryAt: null, waiting: null, streamed: '' });
        break;
      }
      case 'step-finished': {
        const step = this.step(event.runId, event.stepNumber);
        step.running = false;
        if (event.result === 'error') step.failures.push({ attempt: event.attempt, error: event.error ?? 'error' });
        break;
      }
      case 'retry-scheduled':
        this.step(event.runId, event.stepNumber).retryAt = event.at + event.delayMs;
        break;
      case 'waiting-for-signal':
        this.step(event.runId, event.stepNumber).waiting = { correlationKey: event.correlationKey, until: event.at + event.timeoutMs };
        break;
      case 'terminal':
        for (const step of this.runs.get(event.runId)?.values() ?? []) {
          step.running = false;
          step.waiting = null;
          step.retryAt = null;
        }
        break;
    }
  }

  streamed(runId: string, stepNumber: number, text: string): void {
    this.step(runId, stepNumber).streamed = text;
  }
}

/** Finished steps first (from their durable records), then the step the run is at. */
export interface TimelineEntry {
  readonly stepNumber: number;
  readonly label: string;
  readonly record: StepRecord | null;
  readonly live: LiveStep | null;
}

export function timeline(row: RunRow, records: readonly StepRecord[], live: readonly LiveStep[]): TimelineEntry[] {
  const byStep = new Map<number, TimelineEntry>();
  for (const record of records) byStep.set(record.stepNumber, { stepNumber: record.stepNumber, label: record.label, record, live: null });
  for (const step of live) {
    const known = byStep.get(step.stepNumber);
    byStep.set(step.stepNumber, { stepNumber: step.stepNumber, label: known?.label ?? labelForStep(row.meta, step.stepNumber, row.escalated), record: known?.record ?? null, live: step });
  }
  const current = row.view?.currentStep;
  if (isActive(row) && current !== undefined && !byStep.has(current)) {
    byStep.set(current, { stepNumber: current, label: labelForStep(row.meta, current, row.escalated), record: null, live: null });
  }
  return [...byStep.values()].sort((a, b) => a.stepNumber - b.stepNumber);
}
