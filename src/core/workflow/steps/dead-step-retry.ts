/**
 * Retrying a dead job of the runtime's queue, for operators (the CLI's `retry`, the inspector's
 * Retry button). One rule for every caller:
 * - a terminal notification: requeued, so the hook is called again (hooks are at-least-once);
 * - a step of a run that is still active (dead-lettered outside a worker, before reconciliation
 *   failed the run): requeued; the run's record and pointer still name it, so the run resumes;
 * - a step whose run ended with it (every dead-letter in the worker fails its run): the run is
 *   revived. One transaction requeues the step and writes the run's record and step pointer
 *   again, only while no run with that id exists (a resubmitted id is CONFLICT, reason
 *   `run_resubmitted`: requeueing then would fork the id into two chains). The revived run is
 *   listed and queried like any active run, and its hook hears its next ending too. Its record
 *   keeps the hash of the dead step's input, which for steps after the first is not the run's
 *   input: a resubmission of the id while it runs reports INPUT_MISMATCH there. A revived run
 *   that held a concurrency slot takes one back, over the limit if its key is full (its ending
 *   released the slot it had; its next ending releases this one);
 * - any other job on the queue that is not a step (no run-id header): requeued as is.
 *
 * Writer only.
 */
import { ConflictError, CorruptDataError, isTaqubaError, NotFoundError } from '../../errors.js';
import { sha256 } from '../../hash.js';
import type { JobRecord, Queue } from '../../queue/index.js';
import { HEADER_RUN_ID, HEADER_STEP, HEADER_TERMINAL } from '../constants.js';
import { runRecordKey, stepPointerKey } from '../keys.js';
import { decodeStepPointer, encodeRunRecord, encodeStepPointer } from '../records.js';
import type { CommandRecord } from '../commands/ledger.js';
import { retakeSlot } from '../flow/concurrency.js';
import { HEADER_CONCURRENCY_KEY, withFlowLock } from '../flow/flow-locks.js';

/** What was requeued: a step of an active run, a step whose ended run came back (`revived`), a terminal notification, or a job that is not a step. */
export type DeadStepRetry = 'step' | 'revived' | 'notification' | 'other';

/**
 * Requeues dead job `jobId` of the runtime whose steps go to `queueName` (see the module comment
 * for what each kind does). Rejects with NOT_FOUND (no dead job of this id on the queue), CONFLICT
 * (reason `run_resubmitted`: a run with the step's run id exists again), CORRUPT_DATA (an
 * undecodable pointer or step header, or the job's payload object is unreadable),
 * INVALID_ARGUMENT (bad id), CLOSED or store errors. `record`: the command being applied, whose
 * answer commits with the requeue (commands/ledger.ts).
 */
export async function retryDeadStep(queue: Queue, queueName: string, jobId: string, now: number, record?: CommandRecord): Promise<DeadStepRetry> {
  const job = await queue.getJob(jobId);
  if (job === undefined || job.status !== 'dead' || job.queue !== queueName) {
    throw new NotFoundError(`no dead job with this id on the runtime's queue. jobId=${jobId} queue=${queueName}`, { jobId, queue: queueName });
  }
  const runId = job.headers[HEADER_RUN_ID];
  const kind: DeadStepRetry = job.headers[HEADER_TERMINAL] !== undefined ? 'notification' : runId === undefined ? 'other' : 'step';
  if (kind === 'step' && !(await stillActive(queue, runId!, jobId))) {
    await reviveRun(queue, queueName, job, runId!, now, record?.writes('revived' satisfies DeadStepRetry) ?? []);
    return 'revived';
  }
  await queue.requeueDeadJob(job, record ? { kvWrites: record.writes(kind) } : {});
  return kind;
}

async function stillActive(queue: Queue, runId: string, jobId: string): Promise<boolean> {
  const pointer = await queue.kvGet(stepPointerKey(runId));
  return pointer !== undefined && decodeStepPointer(pointer).jobId === jobId && (await queue.kvGet(runRecordKey(runId))) !== undefined;
}

async function reviveRun(queue: Queue, queueName: string, job: JobRecord, runId: string, now: number, answer: readonly (readonly [Uint8Array, Uint8Array])[]): Promise<void> {
  // A run that held a concurrency slot released it when it ended: it takes one back (flow/concurrency.ts).
  const key = job.headers[HEADER_CONCURRENCY_KEY];
  if (key === undefined) return requeueRevived(queue, job, runId, now, answer);
  return withFlowLock(queue, queueName, 'concurrency', key, async () => requeueRevived(queue, job, runId, now, [...answer, await retakeSlot(queue, queueName, key)]));
}

async function requeueRevived(queue: Queue, job: JobRecord, runId: string, now: number, answer: readonly (readonly [Uint8Array, Uint8Array])[]): Promise<void> {
  const step = Number(job.headers[HEADER_STEP]);
  if (!Number.isSafeInteger(step) || step < 0) {
    throw new CorruptDataError(`a dead step job without a valid step header. jobId=${job.id} step=${String(job.headers[HEADER_STEP])}`, { jobId: job.id, reason: 'invalid_step_header' });
  }
  const record = encodeRunRecord({ runId, submittedAtMs: now, inputHash: await sha256(job.payload) });
  try {
    await queue.requeueDeadJob(job, {
      unlessKvExists: runRecordKey(runId),
      kvWrites: [
        [runRecordKey(runId), record],
        [stepPointerKey(runId), encodeStepPointer({ step, jobId: job.id })],
        ...answer,
      ],
    });
  } catch (e) {
    if (isTaqubaError(e) && e.code === 'CONFLICT' && e.details?.reason === 'kv_exists') {
      throw new ConflictError(`a run with this id was submitted again after this step failed it; retrying the step would fork the id (discard the dead step instead). jobId=${job.id} runId=${runId}`, {
        reason: 'run_resubmitted',
        jobId: job.id,
        runId,
      });
    }
    throw e;
  }
}
