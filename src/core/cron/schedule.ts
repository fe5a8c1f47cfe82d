/**
 * A schedule as the caller writes it (`Schedule`), its checks, and its stored form. Exactly one
 * target key says what each firing does: `start` a workflow function, `submit` a plain run, a
 * typed `job`, or `enqueue` a plain queue job. The target is resolved against the scheduler's
 * runtime and job runner when it is defined (their queue names are stored with it) and kept as
 * data, so the writer fires it whatever code defined it.
 */
import { InvalidArgumentError, InvalidConfigError } from '../errors.js';
import { show } from '../show.js';
import type { AnyJob, Job } from '../jobs/job.js';
import type { JobRunner } from '../jobs/job-runner.js';
import { encodeEnvelope as encodeJobEnvelope } from '../jobs/job-records.js';
import { validateHeaders, validateMaxAttempts, validatePayload, validatePriority, validateQueueName } from '../queue/records/validation.js';
import { MAX_KV_VALUE_SIZE } from '../queue/index.js';
import type { Workflow } from '../workflow/functions/define.js';
import { startSpec } from '../workflow/functions/workflow-run.js';
import type { WorkflowRuntime } from '../workflow/runtime.js';
import { checkUserHeaders } from '../workflow/validation.js';
import { DEFAULT_TIMEZONE, parseCronExpression, type CronExpression } from './cron-expression.js';
import { encodeSchedule, type ScheduleInfo, type ScheduleTargetInfo, type ScheduleTargetOptions } from './schedule-record.js';

/** Schedule names: 1..100 of `[A-Za-z0-9_-]` (they are part of every firing's run id). */
const NAME = /^[A-Za-z0-9_-]{1,100}$/;

/** When and under which name. */
interface ScheduleTiming {
  /** 1..100 characters of `[A-Za-z0-9_-]`, unique in the store. */
  readonly name: string;
  /** 5-field POSIX cron: minute hour day-of-month month day-of-week (see `parseCronExpression`). */
  readonly cron: string;
  /** IANA time zone the expression is read in. Default `UTC`. */
  readonly timezone?: string;
  /** Headers of every firing's run or job (run targets: `workflow.*` names are reserved). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Queue priority of every firing (lower is claimed first). Default: the queue's. */
  readonly priority?: number;
  /** Attempts per job or per step of a firing (not for `start`: a workflow's steps carry their own). */
  readonly maxAttempts?: number;
}

/** What each firing does: exactly one of these keys. */
export type ScheduleTarget<I = unknown> =
  /** `runtime.start(workflow, input)` on the scheduler's runtime (built with `{ workflows }`). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any output
  | { readonly start: readonly [workflow: Workflow<I, any>, input: NoInfer<I>]; readonly submit?: never; readonly job?: never; readonly enqueue?: never }
  /** `runtime.submit({ input })` on the scheduler's runtime (a `StepRunner` runtime). */
  | { readonly submit: { readonly input?: Uint8Array }; readonly start?: never; readonly job?: never; readonly enqueue?: never }
  /** `jobs.submit(job, input)` on the scheduler's job runner (the job registered there). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any output and error
  | { readonly job: readonly [job: Job<I, any, any>, input: NoInfer<I>]; readonly start?: never; readonly submit?: never; readonly enqueue?: never }
  /** `queue.enqueue(queue, payload)`: a plain job for a queue worker. */
  | { readonly enqueue: { readonly queue: string; readonly payload?: Uint8Array }; readonly start?: never; readonly submit?: never; readonly job?: never };

/** A cron schedule: its name and expression, and the one target each firing enqueues. */
export type Schedule<I = unknown> = ScheduleTiming & ScheduleTarget<I>;

/** A schedule of any input (a list of different schedules). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- inputs differ per schedule
export type AnySchedule = Schedule<any>;

/** What runs the targets: the scheduler's runtime and job runner. */
export interface ScheduleExecutors {
  readonly runtime: WorkflowRuntime | undefined;
  readonly jobs: JobRunner | undefined;
}

/**
 * What resolving a target needs of the runtime and the job runner: their queue names and their
 * checks of a workflow or a job. The real ones (`ScheduleExecutors`) are such; a host that checks
 * its declared schedules before it builds them passes stand-ins (host-schedules.ts).
 */
export interface ScheduleResolvers {
  readonly runtime: { readonly queueName: string; workflowRun(workflow: Workflow, runId: string): unknown } | undefined;
  readonly jobs: { readonly queueName: string; handle(job: AnyJob, id: string): unknown } | undefined;
}

const TIMING_KEYS = ['name', 'cron', 'timezone', 'headers', 'priority', 'maxAttempts'] as const;
const TARGET_KEYS = ['start', 'submit', 'job', 'enqueue'] as const;

function invalid(name: unknown, rule: string, extra: Record<string, string> = {}): InvalidArgumentError {
  return new InvalidArgumentError(`invalid schedule: ${rule}. schedule=${show(name)}`, { reason: 'invalid_schedule', schedule: show(name), ...extra });
}

/** Throws INVALID_ARGUMENT (reason `invalid_schedule_name`) for a name outside 1..100 of `[A-Za-z0-9_-]`. */
export function checkScheduleName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new InvalidArgumentError(`schedule name must be 1..100 characters of [A-Za-z0-9_-]. name=${show(name)}`, { reason: 'invalid_schedule_name', name: show(name) });
  }
}

/** A checked definition: its parsed expression and the target as stored. */
export interface ResolvedSchedule {
  readonly name: string;
  readonly expression: CronExpression;
  readonly target: ScheduleTargetInfo;
}

/**
 * Checks `schedule` and resolves its target against `executors`. Throws INVALID_ARGUMENT with
 * reason `invalid_schedule` (shape, unknown key, no or several targets, a target the scheduler
 * has nothing to run it with, a bad option), `invalid_schedule_name`, `invalid_cron_expression`,
 * `invalid_timezone`, or what the target's own checks throw (`unknown_workflow`,
 * `unstorable_input`, `unregistered_job`, `invalid_job_input`, `reserved_header`).
 */
export function resolveSchedule(schedule: AnySchedule, executors: ScheduleResolvers): ResolvedSchedule {
  if (typeof schedule !== 'object' || schedule === null || Array.isArray(schedule)) throw invalid(undefined, `a schedule must be an object, not ${show(schedule)}`);
  const name = (schedule as { name?: unknown }).name;
  checkScheduleName(name);
  for (const key of Object.keys(schedule)) {
    if (!(TIMING_KEYS as readonly string[]).includes(key) && !(TARGET_KEYS as readonly string[]).includes(key)) {
      throw invalid(name, `unknown key ${JSON.stringify(key)} (known: ${[...TIMING_KEYS, ...TARGET_KEYS].join(', ')})`, { key });
    }
  }
  const targets = TARGET_KEYS.filter((k) => schedule[k] !== undefined);
  if (targets.length !== 1) throw invalid(name, `needs exactly one target of ${TARGET_KEYS.join(', ')}, got ${targets.length === 0 ? 'none' : targets.join(' and ')}`);
  const expression = parseCronExpression(schedule.cron, schedule.timezone ?? DEFAULT_TIMEZONE);
  const options = targetOptions(schedule, name);
  return { name, expression, target: resolveTarget(schedule, name, options, executors) };
}

function targetOptions(schedule: AnySchedule, name: string): ScheduleTargetOptions {
  const headers = schedule.headers ?? {};
  validateHeaders(headers);
  if (schedule.priority !== undefined) validatePriority(schedule.priority);
  if (schedule.maxAttempts !== undefined) {
    if (schedule.start !== undefined) throw invalid(name, 'maxAttempts does not apply to a workflow start (give the steps their own attempts)', { key: 'maxAttempts' });
    validateMaxAttempts(schedule.maxAttempts);
  }
  return { headers: { ...headers }, ...(schedule.priority === undefined ? {} : { priority: schedule.priority }), ...(schedule.maxAttempts === undefined ? {} : { maxAttempts: schedule.maxAttempts }) };
}

function needs<T>(executor: T | undefined, name: string, what: string): T {
  if (executor === undefined) throw invalid(name, `its target needs ${what}, and this scheduler has none`, { key: what });
  return executor;
}

/** `[definition, input]`, the definition an object with a string `name` (a workflow or a job). */
function tupleOf(value: unknown, name: string, key: string): readonly [{ readonly name: string }, unknown] {
  const definition: unknown = Array.isArray(value) ? value[0] : undefined;
  if (!Array.isArray(value) || value.length !== 2 || typeof definition !== 'object' || definition === null || typeof (definition as { name?: unknown }).name !== 'string') {
    throw invalid(name, `${key} must be a [${key === 'start' ? 'workflow' : 'job'}, input] pair, not ${show(value)}`, { key });
  }
  return value as unknown as readonly [{ readonly name: string }, unknown];
}

function resolveTarget(schedule: AnySchedule, name: string, options: ScheduleTargetOptions, executors: ScheduleResolvers): ScheduleTargetInfo {
  if (schedule.start !== undefined) {
    const runtime = needs(executors.runtime, name, 'runtime');
    const [definition, input] = tupleOf(schedule.start, name, 'start');
    const workflow = definition as Workflow;
    checkUserHeaders(options.headers);
    // Throws unknown_workflow for a workflow the runtime was not built with.
    runtime.workflowRun(workflow, 'cron-check');
    // The run input `runtime.start` would submit (throws unstorable_input).
    const { input: runInput } = startSpec(workflow, input, {});
    return { type: 'start', queueName: runtime.queueName, workflow: `${workflow.name}@${workflow.version}`, input: runInput!, options };
  }
  if (schedule.submit !== undefined) {
    const runtime = needs(executors.runtime, name, 'runtime');
    const submit = schedule.submit as { input?: unknown } | null;
    if (typeof submit !== 'object' || submit === null || Object.keys(submit).some((k) => k !== 'input')) throw invalid(name, `submit must be { input? }, not ${show(submit)}`, { key: 'submit' });
    const input = submit.input ?? new Uint8Array(0);
    validatePayload(input, 'submit.input');
    checkUserHeaders(options.headers);
    return { type: 'submit', queueName: runtime.queueName, input, options };
  }
  if (schedule.job !== undefined) {
    const jobs = needs(executors.jobs, name, 'jobs');
    const [definition, input] = tupleOf(schedule.job, name, 'job');
    const job = definition as AnyJob;
    // Throws unregistered_job unless the runner has this job.
    jobs.handle(job, 'cron-check');
    checkUserHeaders(options.headers);
    // The job's own attempts, as `JobRunner.submit` applies them.
    const attempts = options.maxAttempts ?? job.maxAttempts;
    const jobOptions = attempts === undefined ? options : { ...options, maxAttempts: attempts };
    return { type: 'job', queueName: jobs.queueName, job: job.name, input: jobRunInput(job, input, name), options: jobOptions };
  }
  const enqueue = schedule.enqueue as { queue?: unknown; payload?: unknown } | null;
  if (typeof enqueue !== 'object' || enqueue === null || Object.keys(enqueue).some((k) => k !== 'queue' && k !== 'payload')) {
    throw invalid(name, `enqueue must be { queue, payload? }, not ${show(enqueue)}`, { key: 'enqueue' });
  }
  validateQueueName(enqueue.queue);
  const payload = enqueue.payload ?? new Uint8Array(0);
  validatePayload(payload, 'enqueue.payload');
  return { type: 'enqueue', queueName: enqueue.queue, input: payload, options };
}

/** The run input a `JobRunner.submit` of `job` would store: the job's envelope of its encoded input. */
function jobRunInput(job: AnyJob, input: unknown, name: string): Uint8Array {
  try {
    const parsed: unknown = job.parse.input ? job.parse.input(input) : input;
    return encodeJobEnvelope({ name: job.name, input: job.codec.encode(parsed) });
  } catch (e) {
    throw new InvalidArgumentError(`schedule ${name}: job input does not parse or encode: ${e instanceof Error ? e.message : String(e)}. job=${job.name}`, {
      reason: 'invalid_job_input',
      job: job.name,
      schedule: name,
    });
  }
}

/**
 * Resolves a declared list (`schedules` of a scheduler or a host). Throws INVALID_CONFIG for a
 * value that is not an array, INVALID_ARGUMENT for a bad schedule (see `resolveSchedule`) or two
 * under one name (reason `duplicate_schedule`).
 */
export function resolveDeclared(declared: unknown, executors: ScheduleResolvers): ResolvedSchedule[] {
  if (!Array.isArray(declared)) throw new InvalidConfigError(`schedules must be an array of schedules. schedules=${show(declared)}`, { option: 'schedules' });
  const seen = new Set<string>();
  return (declared as readonly AnySchedule[]).map((schedule) => {
    const resolved = resolveSchedule(schedule, executors);
    if (seen.has(resolved.name)) {
      throw new InvalidArgumentError(`two declared schedules have the same name. schedule=${resolved.name}`, { reason: 'duplicate_schedule', schedule: resolved.name });
    }
    seen.add(resolved.name);
    return resolved;
  });
}

/** The stored record of a new schedule (first firing strictly after `nowMs`); INVALID_ARGUMENT when it is over the KV value cap. */
export function newScheduleRecord(resolved: ResolvedSchedule, nowMs: number): ScheduleInfo {
  const record: ScheduleInfo = {
    name: resolved.name,
    cron: resolved.expression.expression,
    timezone: resolved.expression.timezone,
    target: resolved.target,
    definedAtMs: nowMs,
    nextFireMs: resolved.expression.nextAfter(nowMs),
  };
  checkRecordSize(record);
  return record;
}

function checkRecordSize(record: ScheduleInfo): void {
  const size = encodeSchedule(record).length;
  // Leaves room for the last firing's id.
  if (size > MAX_KV_VALUE_SIZE - 256) {
    throw invalid(record.name, `its stored form is ${size} bytes, over the ${MAX_KV_VALUE_SIZE - 256} a schedule may take (keep big inputs in the store and pass a key)`, { key: 'input' });
  }
}
