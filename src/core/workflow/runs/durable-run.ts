/**
 * A run as the store records it, read without the in-process registry: the run record, the step
 * pointer and the queue job the pointer names. This is what `cancel` and `readStatus` fall back
 * to for runs this process has not seen yet (after a restart, or in the browser after a tab
 * takeover, a run parked on a signal or a timer appears in the registry only once its step is
 * claimed here, which may be hours away).
 *
 * The three reads are separate snapshots, so a settlement can commit between them. Every
 * settlement moves the record, pointer and job together (an advance acks the job and repoints in
 * one transaction; a termination deletes record and pointer with the job's last transition), so
 * a mixed view shows up as a pointer whose job is gone or done, or a record without a pointer:
 * both are reported as `moved` and the caller reads again.
 *
 * Several runtimes may share one queue handle under different queue names; run records and step
 * pointers live in the one caller KV, so a read also checks that the pointer's job is on the
 * reading runtime's queue. A run whose step job is on another queue belongs to another runtime
 * (`foreign`): cancel and status treat it as unknown, as the reference does.
 */
import type { JobRecord } from '../../queue/index.js';
import { corrupt } from '../errors.js';
import { flowQueuedKey, runRecordKey, stepPointerKey } from '../keys.js';
import { decodeStepPointer } from '../records.js';
import { parseStepJob } from '../steps/step-headers.js';
import { decodeQueuedRun, type QueuedRun } from '../flow/flow-records.js';

export type DurableRun =
  /** No run record: never submitted, or terminated (its id is released). */
  | { readonly type: 'absent' }
  /** The run's current step job waits (pending or scheduled) or runs (claimed). `record`: the run record's bytes. */
  | { readonly type: 'active'; readonly step: number; readonly job: JobRecord; readonly record: Uint8Array }
  /** The current step job was dead-lettered outside a worker; reconciliation will fail the run. */
  | { readonly type: 'dead'; readonly step: number; readonly job: JobRecord; readonly record: Uint8Array }
  /**
   * The run waits for a concurrency slot (flow/concurrency.ts): no job yet (`jobId` is the id the
   * pointer names, of no job); `run` is its waiting entry at `seq` of `key`.
   */
  | { readonly type: 'queued'; readonly step: 0; readonly jobId: string; readonly key: string; readonly seq: number; readonly run: QueuedRun; readonly record: Uint8Array }
  /** The run's step job is on another queue name: another runtime's run (treated as unknown). */
  | { readonly type: 'foreign' }
  /** A settlement committed between the reads; read again. */
  | { readonly type: 'moved' };

/** Reads of a run that keeps moving before `cancel` / `readStatus` give up with CONFLICT. */
export const DURABLE_READ_ATTEMPTS = 5;

/**
 * What a durable read needs: caller-KV and job lookups, which the writer's `Queue` and a
 * read-only `QueueReader` both offer.
 */
export interface DurableRunSource {
  kvGet(key: Uint8Array): Promise<Uint8Array | undefined>;
  getJob(id: string): Promise<JobRecord | undefined>;
}

/**
 * One read of the run's durable state, as seen by the runtime whose steps go to `queueName`.
 * Rejects with CORRUPT_DATA (undecodable pointer), CLOSED or store errors.
 */
export async function readDurableRun(source: DurableRunSource, runId: string, queueName: string): Promise<DurableRun> {
  const record = await source.kvGet(runRecordKey(runId));
  if (record === undefined) return { type: 'absent' };
  const pointerBytes = await source.kvGet(stepPointerKey(runId));
  // Record and pointer are written and deleted together: the run terminated after the first read
  // (and maybe a new run took the id). A record that really lacks its pointer is reported by
  // the caller once its attempts run out.
  if (pointerBytes === undefined) return { type: 'moved' };
  const pointer = decodeStepPointer(pointerBytes);
  if (pointer.queued !== undefined) {
    const { queueName: owner, key, seq } = pointer.queued;
    if (owner !== queueName) return { type: 'foreign' };
    // Admission deletes the entry and unmarks the pointer together: a missing entry means it moved.
    const entry = await source.kvGet(flowQueuedKey(queueName, key, seq));
    if (entry === undefined) return { type: 'moved' };
    return { type: 'queued', step: 0, jobId: pointer.jobId, key, seq, run: decodeQueuedRun(entry), record };
  }
  const job = await source.getJob(pointer.jobId);
  if (job === undefined || job.status === 'done') return { type: 'moved' };
  // Every step of a run goes to the queue name of the runtime that submitted it.
  if (job.queue !== queueName) return { type: 'foreign' };
  // The job's own step: a job continued in place has moved on from the step the pointer names.
  const parsed = parseStepJob(job);
  const step = 'step' in parsed ? parsed.step : pointer.step;
  if (job.status === 'dead') return { type: 'dead', step, job, record };
  return { type: 'active', step, job, record };
}

/** CORRUPT_DATA (reason `inconsistent_run_state`): the run kept moving for every read. */
export function inconsistent(runId: string): Error {
  return corrupt(`run state stayed inconsistent across reads (a record without a pointer, or a pointer to a settled job). runId=${runId}`, {
    reason: 'inconsistent_run_state',
    runId,
  });
}

/** The run's durable state, read again while settlements move it; CORRUPT_DATA when it never settles. */
export async function readSettledRun(source: DurableRunSource, runId: string, queueName: string): Promise<Exclude<DurableRun, { type: 'moved' }>> {
  for (let attempt = 1; attempt <= DURABLE_READ_ATTEMPTS; attempt++) {
    const run = await readDurableRun(source, runId, queueName);
    if (run.type !== 'moved') return run;
  }
  throw inconsistent(runId);
}
