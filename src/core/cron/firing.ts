/**
 * One firing: the due schedule's target enqueued once for its fire time F, and the schedule's
 * record moved on (last firing F, next firing the first one strictly after now, so after a gap
 * the one recorded overdue firing is made up and the rest are skipped).
 *
 * Exactly once per F, whoever fires it and however often it is retried:
 * - A plain queue job commits with the record in one transaction (`enqueueWithKv`), with dedup
 *   key `cron:{name}:{F}`; a retry that finds the job still waiting gets its id back.
 * - A run (workflow start, plain run, typed job) is submitted as a command with id
 *   `cron:{name}:{F}` and run id `cron-{name}-{F}` (a cluster's differs, see `firingRunId`
 *   in cron-scheduler.ts, but is as fixed per F): the command ledger keeps its answer in the
 *   run's step-0 transaction, so a firing applied again (its record update lost to a crash) answers
 *   with the same run and starts nothing, even after that run ended (within the runtime's
 *   `commandRetentionMs`, one day by default). The record is written next.
 * Callers hold the schedule's lock (queue-schedules.ts) around the read and the firing, so two
 * schedulers on one queue handle never both read F as due; another process cannot fire at all
 * without opening the store as its writer, which fences this one.
 */
import type { Queue } from '../queue/index.js';
import { WORKFLOW_HEADER } from '../workflow/functions/workflow-run.js';
import type { WorkflowRuntime } from '../workflow/runtime.js';
import type { CronExpression } from './cron-expression.js';
import { InvalidArgumentError } from '../errors.js';
import type { ScheduleExecutors } from './schedule.js';
import { encodeSchedule, scheduleKey, type ScheduleInfo, type ScheduleTargetInfo } from './schedule-record.js';

/** Header of every firing's job or run: the schedule's name. */
export const HEADER_CRON_SCHEDULE = 'cron.schedule';
/** Header of every firing's job or run: its fire time, ISO 8601 in UTC (`2025-01-01T03:00:00.000Z`). */
export const HEADER_CRON_FIRE_TIME = 'cron.fire-time';

/** What one firing enqueued. */
export interface CronFiring {
  readonly schedule: string;
  /** The fire time (epoch ms) this firing stands for. */
  readonly fireMs: number;
  /** The queue job id (`enqueue`) or run id (`start`, `submit`, `job`: also the job id of `jobs.handle`). */
  readonly id: string;
}

/** The dedup key (plain jobs) and command id (runs) of a firing. */
export const firingKey = (name: string, fireMs: number): string => `cron:${name}:${fireMs}`;
/** The run id of a firing that starts a run. */
export const firingRunId = (name: string, fireMs: number): string => `cron-${name}-${fireMs}`;

function firingHeaders(record: ScheduleInfo, fireMs: number): Record<string, string> {
  const headers: Record<string, string> = { ...record.target.options.headers, [HEADER_CRON_SCHEDULE]: record.name, [HEADER_CRON_FIRE_TIME]: new Date(fireMs).toISOString() };
  if (record.target.type === 'start') headers[WORKFLOW_HEADER] = record.target.workflow;
  return headers;
}

/** The runtime that runs `target`, or INVALID_ARGUMENT (reason `no_target_runtime`) when this scheduler has none on its queue name. */
function runtimeFor(target: ScheduleTargetInfo, executors: ScheduleExecutors, name: string): WorkflowRuntime {
  const runtime = target.type === 'job' ? executors.jobs?.runtime : executors.runtime;
  if (runtime === undefined || runtime.queueName !== target.queueName) {
    const what = target.type === 'job' ? 'job runner' : 'runtime';
    throw new InvalidArgumentError(`schedule ${name} fires on the ${what} of queue name ${JSON.stringify(target.queueName)}, and this scheduler has ${runtime ? `one on ${JSON.stringify(runtime.queueName)}` : 'none'}`, {
      reason: 'no_target_runtime',
      schedule: name,
      queueName: target.queueName,
    });
  }
  return runtime;
}

/**
 * Fires `record` (due: `nextFireMs <= nowMs`) and commits its next state. Rejects with what the
 * enqueue or submission rejects with (the record is then unchanged, so the firing is retried).
 */
export async function fire(
  queue: Queue,
  executors: ScheduleExecutors,
  record: ScheduleInfo,
  expression: CronExpression,
  nowMs: number,
  runIdOf: (name: string, fireMs: number) => string = firingRunId,
): Promise<CronFiring> {
  const fireMs = record.nextFireMs;
  const nextFireMs = expression.nextAfter(Math.max(nowMs, fireMs));
  const fired = (id: string): [Uint8Array, Uint8Array] => [scheduleKey(record.name), encodeSchedule({ ...record, nextFireMs, lastFireMs: fireMs, lastFireId: id })];
  const { target } = record;
  const headers = firingHeaders(record, fireMs);
  const { priority, maxAttempts } = target.options;
  if (target.type === 'enqueue') {
    // The id is drawn first so the record committed with the job can name it.
    const id = queue.nextJobId();
    const result = await queue.enqueueWithKv(
      target.queueName,
      target.input,
      { dedupKey: firingKey(record.name, fireMs), idOverride: id, headers, ...(priority === undefined ? {} : { priority }), ...(maxAttempts === undefined ? {} : { maxAttempts }) },
      [fired(id)],
    );
    // A dedup hit commits nothing: the job of an earlier try is still waiting.
    if (result.type === 'already_enqueued') await queue.kvPut(...fired(result.id));
    return { schedule: record.name, fireMs, id: result.id };
  }
  const runtime = runtimeFor(target, executors, record.name);
  const outcome = await runtime.submit(
    {
      runId: runIdOf(record.name, fireMs),
      input: target.input,
      headers,
      ...(priority === undefined ? {} : { priority }),
      ...(maxAttempts === undefined ? {} : { maxAttemptsPerStep: maxAttempts }),
    },
    { commandId: firingKey(record.name, fireMs) },
  );
  await queue.kvPut(...fired(outcome.runId));
  return { schedule: record.name, fireMs, id: outcome.runId };
}
