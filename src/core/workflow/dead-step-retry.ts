/**
 * Retrying a dead job of the runtime's queue, for operators (the CLI's `retry`, an inspector's
 * retry button). Which dead jobs can go back:
 * - a terminal notification: requeued, so the hook is called again (hooks are at-least-once);
 * - a step of a run that is still active: a step dead-lettered outside a worker (a lease that
 *   expired on the last attempt, too many interruptions) before reconciliation failed the run.
 *   The run's record and pointer still name the job, so requeueing resumes the run;
 * - any other job on the queue that is not a step (no run-id header): requeued as is.
 * A step whose run already ended is refused (CONFLICT, reason `run_ended`): every dead-letter in
 * the worker fails the run in the same transaction, deleting its record and pointer and sending
 * its notification, so requeueing the step would run a step of a finished run that no query
 * shows. Submit the run again instead.
 *
 * Writer only. The check and the requeue are two transactions: a reconciliation pass of the same
 * runtime that commits between them can still end the run, so an inspector should retry while
 * reconciliation is not running, or accept that rare outcome.
 */
import { ConflictError, NotFoundError } from '../errors.js';
import type { Queue } from '../queue/index.js';
import { HEADER_RUN_ID, HEADER_TERMINAL } from './constants.js';
import { runRecordKey, stepPointerKey } from './keys.js';
import { decodeStepPointer } from './records.js';

/** What was requeued: a step of an active run, a terminal notification, or a job that is not a step. */
export type DeadJobRetry = 'step' | 'notification' | 'other';

/**
 * Requeues dead job `jobId` of the runtime whose steps go to `queueName` (see the module comment
 * for which jobs qualify). Rejects with NOT_FOUND (no dead job of this id on the queue), CONFLICT
 * (reason `run_ended`: the step's run already ended), CORRUPT_DATA (an undecodable pointer, or the
 * job's payload object is unreadable), INVALID_ARGUMENT (bad id), CLOSED or store errors.
 */
export async function retryDeadJob(queue: Queue, queueName: string, jobId: string): Promise<DeadJobRetry> {
  const job = await queue.getJob(jobId);
  if (job === undefined || job.status !== 'dead' || job.queue !== queueName) {
    throw new NotFoundError(`no dead job with this id on the runtime's queue. jobId=${jobId} queue=${queueName}`, { jobId, queue: queueName });
  }
  const runId = job.headers[HEADER_RUN_ID];
  const kind: DeadJobRetry = job.headers[HEADER_TERMINAL] !== undefined ? 'notification' : runId === undefined ? 'other' : 'step';
  if (kind === 'step') {
    const pointer = await queue.kvGet(stepPointerKey(runId!));
    const live = pointer !== undefined && decodeStepPointer(pointer).jobId === jobId && (await queue.kvGet(runRecordKey(runId!))) !== undefined;
    if (!live) {
      throw new ConflictError(`the run of this dead step already ended; requeueing would run a step of a finished run (submit the run again). jobId=${jobId} runId=${runId}`, {
        reason: 'run_ended',
        jobId,
        runId,
      });
    }
  }
  await queue.requeueDeadJob(job);
  return kind;
}
