/**
 * The leader's side of every `RuntimeOperations` call: the operations run against this worker's
 * `WorkflowRuntime` and `Queue`. Runs are reported from their durable records (run record, step
 * pointer, the step's job), so a run submitted under an earlier leader is visible at once after
 * a takeover, and terminal outcomes this leader saw commit are remembered (bounded) for `status`.
 */
import { fromUtf8, utf8 } from '../core/bytes.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { Queue } from '../core/queue/index.js';
import { HEADER_RUN_ID, HEADER_SIGNAL_WAIT, HEADER_STEP, HEADER_TERMINAL, type RunOutcome, type SignalOutcome, type SubmitOutcome, type WorkflowRuntime } from '../core/workflow/index.js';
import { kvKeyBytes, show, validateRunId } from '../core/workflow/errors.js';
import { RUNS_PREFIX, stepPointerKey } from '../core/workflow/keys.js';
import { decodeRunRecord, decodeStepPointer } from '../core/workflow/records.js';
import type { DeadStepPageOptions, DeadStepView, KvEntryPage, KvScanPageOptions, ListRunsOptions, RunPage, RunView, RuntimeOperations, WireRunSpec } from './protocol.js';
import { exportBytes, TRANSFER_THRESHOLD_BYTES } from './transfer-handlers.js';

/** Largest page `listDeadSteps` serves. */
const DEAD_PAGE_LIMIT_MAX = 1000;
/** Terminal outcomes remembered for `status`. */
const TERMINAL_CACHE_SIZE = 1000;

/** Bytes leaving the runtime: an exact-size view, a private copy when large enough to be transferred. */
function outBytes(bytes: Uint8Array): Uint8Array {
  return exportBytes(bytes, bytes.byteLength >= TRANSFER_THRESHOLD_BYTES);
}

export class LocalOperations implements RuntimeOperations {
  private readonly terminals = new Map<string, RunView>();

  constructor(
    private readonly runtime: WorkflowRuntime,
    private readonly queue: Queue,
  ) {}

  /** Remembers a committed terminal outcome (the newest `TERMINAL_CACHE_SIZE` are kept). */
  noteTerminal(outcome: RunOutcome): void {
    this.terminals.delete(outcome.runId);
    this.terminals.set(outcome.runId, {
      runId: outcome.runId,
      state: outcome.status,
      currentStep: outcome.finalStep,
      result: outcome.result === null ? null : outBytes(outcome.result),
      error: outcome.error,
    });
    if (this.terminals.size > TERMINAL_CACHE_SIZE) this.terminals.delete(this.terminals.keys().next().value as string);
  }

  async submit(spec: WireRunSpec): Promise<SubmitOutcome> {
    if (spec?.runId !== undefined) this.terminals.delete(spec.runId);
    return this.runtime.submit(spec);
  }

  async status(runId: string): Promise<RunView | null> {
    validateRunId(runId);
    const live = this.runtime.status(runId);
    if (live && live.state !== 'pending') return { runId, state: live.state, currentStep: live.currentStep };
    const run = await this.runtime.readDurableRun(runId);
    if (run.type === 'absent') {
      if (live) return { runId, state: live.state, currentStep: live.currentStep };
      const seen = this.terminals.get(runId);
      // A copy: the answer's bytes may be transferred away, the cached ones must stay.
      return seen ? { ...seen, result: seen.result ? seen.result.slice() : null } : null;
    }
    let state: RunView['state'] = 'pending';
    if (run.job.status === 'scheduled') state = run.job.headers[HEADER_SIGNAL_WAIT] !== undefined ? 'waiting-for-signal' : 'scheduled';
    else if (run.job.status === 'claimed') state = 'running';
    return { runId, state, currentStep: run.step };
  }

  cancel(runId: string): Promise<boolean> {
    return this.runtime.cancel(runId);
  }

  signal(correlationKey: string, payload: Uint8Array): Promise<SignalOutcome> {
    return this.runtime.signal(correlationKey, payload);
  }

  clearSignal(correlationKey: string): Promise<boolean> {
    return this.runtime.clearSignal(correlationKey);
  }

  async listRuns(options: ListRunsOptions = {}): Promise<RunPage> {
    const page = await this.queue.kvScan(utf8(RUNS_PREFIX), { cursor: options.cursor, limit: options.limit ?? 100 });
    const runs = await Promise.all(
      page.entries.map(async ([key, value]) => {
        const runId = fromUtf8(key).slice(RUNS_PREFIX.length);
        const record = decodeRunRecord(value);
        const pointer = await this.queue.kvGet(stepPointerKey(runId));
        return { runId, submittedAtMs: record.submittedAtMs, currentStep: pointer === undefined ? null : decodeStepPointer(pointer).step };
      }),
    );
    return { runs, nextCursor: page.nextCursor === undefined ? undefined : exportBytes(page.nextCursor, true) };
  }

  async kvGet(key: Parameters<RuntimeOperations['kvGet']>[0]): Promise<Uint8Array | null> {
    const value = await this.queue.kvGet(kvKeyBytes(key));
    return value === undefined ? null : outBytes(value);
  }

  async kvScan(prefix: Parameters<RuntimeOperations['kvScan']>[0], options: KvScanPageOptions = {}): Promise<KvEntryPage> {
    const page = await this.queue.kvScan(kvKeyBytes(prefix, 'kv prefix'), { cursor: options.cursor, limit: options.limit ?? 100 });
    return {
      entries: page.entries.map(([k, v]) => [exportBytes(k), outBytes(v)] as const),
      nextCursor: page.nextCursor === undefined ? undefined : exportBytes(page.nextCursor, true),
    };
  }

  async memoGet(runId: string, scope: number | 'run', key: string): Promise<Uint8Array | null> {
    validateRunId(runId);
    if (scope !== 'run' && !(Number.isSafeInteger(scope) && scope >= 0)) {
      throw new InvalidArgumentError(`memo scope must be a step number or 'run'. scope=${show(scope)}`, { reason: 'invalid_memo_scope' });
    }
    const memo = scope === 'run' ? this.runtime.memoStore.newRunMemo(runId) : this.runtime.memoStore.newMemo(runId, scope);
    const value = await memo.get(key);
    return value === null ? null : outBytes(value);
  }

  async listDeadSteps(options: DeadStepPageOptions = {}): Promise<readonly DeadStepView[]> {
    const limit = options.limit ?? 50;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > DEAD_PAGE_LIMIT_MAX) {
      throw new InvalidArgumentError(`dead step page limit must be an integer in 1..${DEAD_PAGE_LIMIT_MAX}. limit=${show(limit)}`, { reason: 'invalid_limit' });
    }
    const jobs = await this.queue.deadJobs(this.runtime.queueName, options.afterJobId, limit);
    return jobs.map((job) => {
      const step = job.headers[HEADER_STEP];
      return {
        jobId: job.id,
        runId: job.headers[HEADER_RUN_ID] ?? null,
        stepNumber: step === undefined ? null : Number(step),
        notification: job.headers[HEADER_TERMINAL] !== undefined,
        attempts: job.attempts,
        maxAttempts: job.maxAttempts,
        interruptions: job.interruptions,
        lastError: job.lastError ?? null,
        failedAt: job.failedAt ?? null,
        payloadError: job.payloadError === undefined ? null : { ...job.payloadError },
      };
    });
  }
}
