/**
 * The in-process run registry: what this runtime instance knows about active runs. It answers
 * `status` and routes `cancel`, and it remembers the input hash of runs submitted here so a
 * duplicate submission is answered without I/O. It is not durable: after a restart a run appears
 * here only once one of its steps is claimed by this process; until then `cancel` and
 * `readStatus` find the run through its durable records (cancellation.ts).
 *
 * Transitions: submit → pending(0); claim → running(n) (creating the entry if unknown);
 * advance → pending(n+1) (cancel flag kept); termination → removed. A transient retry makes
 * the entry pending while the step backs off (the next claim makes it running again).
 *
 * With outcome retention on it also remembers each run's submission time (and, with
 * `runIdReuse: 'after-retention'`, its input hash) and the delivery running its step, for the
 * finished-run record: the ending settlement is built without I/O, after the run record it would
 * read is already deleted in the same transaction.
 */
import type { Clock } from '../clock.js';
import type { Claim } from '../queue/index.js';
import type { TerminalStatus } from './runs/terminal-hook.js';

/** An active run's state. */
export type RunState = 'pending' | 'running' | 'cancelling';

export interface RunStatus {
  readonly runId: string;
  /**
   * `cancelling` whenever a cancel was requested and the run has not terminated yet. How a
   * finished run ended (`succeeded`, `failed`, `cancelled`) only where a call asks for finished
   * runs (`readStatus(id, { includeFinished: true })`), and there `moved` for a run handed off
   * to another store (`exportRun` with `handOff`), which continues there.
   */
  readonly state: RunState | TerminalStatus | 'moved';
  /** The step the run has reached (for a finished run, the step that ended it; for a moved one, the step it left at). */
  readonly currentStep: number;
  /** `moved` only: the destination its hand-off named (`to`), or null. */
  readonly movedTo?: string | null;
}

export interface RegistryEntry {
  state: 'pending' | 'running';
  currentStep: number;
  currentJobId: string;
  headers: Readonly<Record<string, string>>;
  cancelRequested: boolean;
  /** Hex SHA-256 of the input; only for runs submitted through this instance. */
  inputHash: string | undefined;
  /**
   * The delivery (claim) currently running the run's step, if any. Only that delivery may move
   * or remove the entry: a stale delivery of the same step (its lease expired and the job was
   * delivered again) must not disturb the entry of the live one.
   */
  delivery: Claim | undefined;
  /** Epoch ms of the run's submission, when known here (see `trackSubmitTimes`). */
  submittedAtMs: number | undefined;
  /** Settles once the background read of the run record (for a run first seen at a claim) is done. */
  recordRead?: Promise<void>;
}

/** What the registry learns from a run record it reads in the background. */
export interface RunRecordFacts {
  readonly submittedAtMs: number;
  readonly inputHashHex: string;
}

export class RunRegistry {
  private readonly entries = new Map<string, RegistryEntry>();
  private submitTimes: { readonly clock: Clock; readonly load: (runId: string) => Promise<RunRecordFacts | undefined> } | undefined;

  /**
   * Remembers submission times from now on: a run submitted here is stamped with `clock` (the
   * run record is stamped by the same clock in the same synchronous step of `submit`); a run
   * first seen at a claim has its record read with `load` in the background (`recordRead`), so
   * its ending knows the time (and input hash) unless the step ends before that read does.
   */
  trackSubmitTimes(clock: Clock, load: (runId: string) => Promise<RunRecordFacts | undefined>): void {
    this.submitTimes = { clock, load };
  }

  get(runId: string): RegistryEntry | undefined {
    return this.entries.get(runId);
  }

  get size(): number {
    return this.entries.size;
  }

  /** A new submission: pending at step 0. */
  submitted(runId: string, jobId: string, headers: Readonly<Record<string, string>>, inputHash: string): RegistryEntry {
    const submittedAtMs = this.submitTimes?.clock.now();
    const entry: RegistryEntry = { state: 'pending', currentStep: 0, currentJobId: jobId, headers, cancelRequested: false, inputHash, delivery: undefined, submittedAtMs };
    this.entries.set(runId, entry);
    return entry;
  }

  /** A step of the run was claimed here by `delivery`. */
  running(runId: string, step: number, jobId: string, headers: Readonly<Record<string, string>>, delivery: Claim): RegistryEntry {
    let entry = this.entries.get(runId);
    if (!entry) {
      const created: RegistryEntry = { state: 'running', currentStep: step, currentJobId: jobId, headers, cancelRequested: false, inputHash: undefined, delivery, submittedAtMs: undefined };
      this.entries.set(runId, created);
      created.recordRead = this.submitTimes?.load(runId).then(
        (facts) => {
          if (created.submittedAtMs === undefined) created.submittedAtMs = facts?.submittedAtMs;
          if (created.inputHash === undefined) created.inputHash = facts?.inputHashHex;
        },
        // Only a detail of the record is lost (CLOSED, a store error).
        () => undefined,
      );
      return created;
    }
    entry.state = 'running';
    entry.currentStep = step;
    entry.currentJobId = jobId;
    entry.headers = headers;
    entry.delivery = delivery;
    return entry;
  }

  /** `delivery` is about to advance the run to `step`, carried by `jobId`. */
  advanced(runId: string, step: number, jobId: string, delivery: Claim): void {
    const entry = this.entries.get(runId);
    if (!entry || entry.delivery !== delivery) return;
    entry.state = 'pending';
    entry.currentStep = step;
    entry.currentJobId = jobId;
    entry.delivery = undefined;
  }

  /** `delivery` failed transiently: the step backs off, waiting in the queue. */
  backingOff(runId: string, delivery: Claim): void {
    const entry = this.entries.get(runId);
    if (!entry || entry.delivery !== delivery) return;
    entry.state = 'pending';
    entry.delivery = undefined;
  }

  /** `delivery` is about to terminate the run. */
  terminated(runId: string, delivery: Claim): void {
    if (this.entries.get(runId)?.delivery === delivery) this.entries.delete(runId);
  }

  isCancelRequested(runId: string): boolean {
    return this.entries.get(runId)?.cancelRequested === true;
  }

  remove(runId: string): void {
    this.entries.delete(runId);
  }

  /** Removes the entry only if it is still `entry` (a later submission may have replaced it). */
  removeIf(runId: string, entry: RegistryEntry): void {
    if (this.entries.get(runId) === entry) this.entries.delete(runId);
  }

  status(runId: string): (RunStatus & { readonly state: RunState }) | null {
    const entry = this.entries.get(runId);
    if (!entry) return null;
    return { runId, state: entry.cancelRequested ? 'cancelling' : entry.state, currentStep: entry.currentStep };
  }
}
