/**
 * The commit that starts a new run: step 0 enqueued (dedup `run:{id}:0`, pre-drawn id) with the
 * caller's KV writes, the run record and the step pointer in one transaction. Plain submissions
 * commit it as is; flow control adds what it decided (a start time, its reserved headers, the
 * key's records) to the same transaction.
 */
import type { EnqueueOptions, EnqueueRequest } from '../../queue/index.js';
import type { RuntimeContext } from '../context.js';
import { runRecordKey, stepDedupKey, stepPointerKey } from '../keys.js';
import { encodeRunRecord, encodeStepPointer, type StepPointer } from '../records.js';
import { stepJobHeaders } from '../steps/step-headers.js';
import type { SubmitOutcome } from '../runs/submit.js';

export type KvPair = readonly [Uint8Array, Uint8Array];

/** A submission that is not a duplicate, validated, with its ids drawn. */
export interface NewRun {
  readonly runId: string;
  /** The id of its step-0 job (pre-drawn, so the registry names it before the commit). */
  readonly jobId: string;
  readonly input: Uint8Array;
  readonly inputHash: Uint8Array;
  /** The run record's submission time (stamped when the registry entry was made). */
  readonly submittedAtMs: number;
  /** The caller's headers (no reserved ones). */
  readonly headers: Readonly<Record<string, string>>;
  /** Priority, attempts and start time of every step (as the spec gave them). */
  readonly options: EnqueueOptions;
  /** The caller's KV writes, committed with the submission. */
  readonly kvWrites: readonly KvPair[];
  /** The writes keeping a command's answer with its effect (commands/ledger.ts); none outside a command. */
  readonly answer: (outcome: SubmitOutcome) => readonly KvPair[];
}

/** What flow control adds to a new run's commit. */
export interface Admission {
  /** Step 0's start time, instead of the spec's. */
  readonly runAt?: number;
  /** Reserved headers every step job of the run carries (flow-locks.ts). */
  readonly reservedHeaders?: Readonly<Record<string, string>>;
  /** Flow records committed with the run. */
  readonly writes?: readonly KvPair[];
}

/**
 * The enqueue of step 0 of `runId` as job `jobId`. A submission's carries the dedup key
 * `run:{id}:0` (a waiting step 0 left without its record answers as a duplicate); `dedup` false
 * for one committed in another run's ending (an admission), which is at most once by itself.
 */
export function stepZeroRequest(
  queueName: string,
  runId: string,
  jobId: string,
  input: Uint8Array,
  options: EnqueueOptions,
  headers: Readonly<Record<string, string>>,
  reserved?: Readonly<Record<string, string>>,
  dedup = true,
): EnqueueRequest {
  const stepHeaders = stepJobHeaders(headers, runId, 0, reserved);
  return { queue: queueName, payload: input, options: dedup ? { ...options, dedupKey: stepDedupKey(runId, 0), idOverride: jobId, headers: stepHeaders } : { ...options, idOverride: jobId, headers: stepHeaders } };
}

/** The run record and step pointer of a new run. */
export function newRunRecords(run: NewRun, pointer: StepPointer): KvPair[] {
  return [
    [runRecordKey(run.runId), encodeRunRecord({ runId: run.runId, submittedAtMs: run.submittedAtMs, inputHash: run.inputHash })],
    [stepPointerKey(run.runId), encodeStepPointer(pointer)],
  ];
}

/** Commits the new run. A dedup hit (a waiting step 0 with no record) applies nothing and answers as a duplicate of that job. */
export async function enqueueNewRun(ctx: RuntimeContext, run: NewRun, admission: Admission = {}): Promise<SubmitOutcome> {
  const { runId, jobId } = run;
  const options = admission.runAt === undefined ? run.options : { ...run.options, runAt: admission.runAt };
  const request = stepZeroRequest(ctx.queueName, runId, jobId, run.input, options, run.headers, admission.reservedHeaders);
  const result = await ctx.queue.enqueueWithKv(request.queue, request.payload, request.options, [
    ...run.kvWrites,
    ...newRunRecords(run, { step: 0, jobId }),
    ...(admission.writes ?? []),
    ...run.answer({ runId, newlySubmitted: true, jobId }),
  ]);
  if (result.type === 'already_enqueued') return { runId, newlySubmitted: false, jobId: result.id };
  return { runId, newlySubmitted: true, jobId };
}
