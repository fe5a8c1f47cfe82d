/**
 * The in-process run registry: what this runtime instance knows about active runs. It answers
 * `status` and routes `cancel`, and it remembers the input hash of runs submitted here so a
 * duplicate submission is answered without I/O. It is not durable: after a restart a run appears
 * here only once one of its steps is claimed by this process; until then `cancel` and
 * `readStatus` find the run through its durable records (cancellation.ts).
 *
 * Transitions: submit → pending(0); claim → running(n) (creating the entry if unknown);
 * advance → pending(n+1) (cancel flag kept); termination → removed. A transient retry leaves
 * the entry running while the step backs off.
 */

export type RunState = 'pending' | 'running' | 'cancelling';

export interface RunStatus {
  readonly runId: string;
  /** `cancelling` whenever a cancel was requested and the run has not terminated yet. */
  readonly state: RunState;
  readonly currentStep: number;
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
  delivery: object | undefined;
}

export class RunRegistry {
  private readonly entries = new Map<string, RegistryEntry>();

  get(runId: string): RegistryEntry | undefined {
    return this.entries.get(runId);
  }

  get size(): number {
    return this.entries.size;
  }

  /** A new submission: pending at step 0. */
  submitted(runId: string, jobId: string, headers: Readonly<Record<string, string>>, inputHash: string): RegistryEntry {
    const entry: RegistryEntry = { state: 'pending', currentStep: 0, currentJobId: jobId, headers, cancelRequested: false, inputHash, delivery: undefined };
    this.entries.set(runId, entry);
    return entry;
  }

  /** A step of the run was claimed here by `delivery`. */
  running(runId: string, step: number, jobId: string, headers: Readonly<Record<string, string>>, delivery: object): RegistryEntry {
    let entry = this.entries.get(runId);
    if (!entry) {
      entry = { state: 'running', currentStep: step, currentJobId: jobId, headers, cancelRequested: false, inputHash: undefined, delivery };
      this.entries.set(runId, entry);
      return entry;
    }
    entry.state = 'running';
    entry.currentStep = step;
    entry.currentJobId = jobId;
    entry.headers = headers;
    entry.delivery = delivery;
    return entry;
  }

  /** `delivery` is about to advance the run to `step`, carried by `jobId`. */
  advanced(runId: string, step: number, jobId: string, delivery: object): void {
    const entry = this.entries.get(runId);
    if (!entry || entry.delivery !== delivery) return;
    entry.state = 'pending';
    entry.currentStep = step;
    entry.currentJobId = jobId;
    entry.delivery = undefined;
  }

  /** `delivery` is about to terminate the run. */
  terminated(runId: string, delivery: object): void {
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

  status(runId: string): RunStatus | null {
    const entry = this.entries.get(runId);
    if (!entry) return null;
    return { runId, state: entry.cancelRequested ? 'cancelling' : entry.state, currentStep: entry.currentStep };
  }
}
