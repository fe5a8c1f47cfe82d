/**
 * A `JobRunner`'s jobs as a `JobOutcomeSource`: outcomes from its runtime's run memos and
 * finished-run records, waited for on its queue, so a handle waits in a process whose queue is
 * the one the job runs on.
 */
import { systemClock } from '../clock.js';
import type { Queue } from '../queue/index.js';
import { isFinishedRun } from '../workflow/history/finished-runs.js';
import type { RunStatus } from '../workflow/registry.js';
import type { WorkflowRuntime } from '../workflow/runtime.js';
import { endedWithoutRecord, jobNotFound, type JobOutcomeSource, type JobRef } from './job-handle.js';
import { readOutcome, type JobOutcome, type OutcomeRecord } from './job-records.js';

/** How long one wait on the queue job lasts before the handle looks again. */
const WAIT_CHUNK_MS = 3_600_000;

export class RuntimeJobOutcomes implements JobOutcomeSource {
  constructor(
    private readonly runtime: WorkflowRuntime,
    private readonly queue: Queue,
  ) {}

  /** The stored outcome record of job `id`, or null. CORRUPT_DATA for an undecodable one. */
  record(id: string): Promise<OutcomeRecord | null> {
    return readOutcome(this.runtime.memoStore.newRunMemo(id));
  }

  async fetch(job: JobRef): Promise<JobOutcome | null> {
    const stored = await this.record(job.id);
    if (stored) return stored;
    const run = await this.runtime.getRun(job.id, { includeFinished: true });
    if (!isFinishedRun(run)) return null;
    // The run may have ended (with its record) between the two reads.
    return (await this.record(job.id)) ?? endedWithoutRecord(run) ?? null;
  }

  async wait(job: JobRef, signal: AbortSignal | undefined): Promise<JobOutcome | null> {
    const stored = await this.record(job.id);
    if (stored) return stored;
    // Active first: an id submitted again after it ended is awaited anew.
    const run = await this.runtime.getRun(job.id, { includeFinished: true });
    if (run === null || isFinishedRun(run)) {
      // No active run: its outcome (if any) was written before the run ended.
      const ended = (await this.record(job.id)) ?? (run === null ? undefined : endedWithoutRecord(run));
      if (ended) return ended;
      throw jobNotFound(job.id);
    }
    // Dead-lettered outside the worker (reconciliation fails the run later, with this error).
    if (run.state === 'dead') return { ok: false, reason: 'dead_lettered', message: run.lastError ?? 'the job was dead-lettered' };
    // Ends as timed out when `signal` aborts later, and the handle then says so. An abort during
    // the reads above would not wake it: checked first.
    if (signal?.aborted) return null;
    const waited = await this.queue.waitForCompletion(run.jobId, WAIT_CHUNK_MS, signal);
    // No such job in the queue: the run waits for a concurrency slot (its step 0 is enqueued when
    // it is admitted), or moved on between the reads. Read again after the runtime's poll
    // interval, in real time (a handle's patience is not queue time, as its timeout); at once,
    // the handle's loop would spin without yielding.
    if (waited.type === 'not_found') await systemClock.sleep(this.runtime.pollIntervalMs, signal).catch(() => undefined);
    return null;
  }

  status(id: string): Promise<RunStatus | null> {
    return this.runtime.readStatus(id);
  }

  cancel(id: string): Promise<boolean> {
    return this.runtime.cancel(id);
  }
}
