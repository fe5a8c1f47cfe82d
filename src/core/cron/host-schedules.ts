/**
 * Checking a host's declared schedules before the host builds its runtime: the browser host in
 * its constructor (its leader builds the runtime later, in whichever tab wins the lock) and a
 * cluster when it opens (its shards build theirs as members take them). A bad schedule then fails
 * where the app passed it, not in a leader or shard that would fail the same way after every
 * takeover. The checks are the scheduler's own (`resolveDeclared`), against stand-ins that know
 * what the host will build: its queue names, its workflows and its jobs.
 */
import { InvalidArgumentError } from '../errors.js';
import { show } from '../show.js';
import type { AnyJob } from '../jobs/job.js';
import type { Workflow, WorkflowRegistry } from '../workflow/functions/define.js';
import { resolveDeclared, type ResolvedSchedule, type ScheduleResolvers } from './schedule.js';

/** What the host will build. */
export interface PlannedHost {
  /** The runtime's queue name. */
  readonly queueName: string;
  /** Its workflow functions; undefined for a `StepRunner` runtime. */
  readonly workflows: WorkflowRegistry | undefined;
  /** Its typed jobs (none: no job runner). */
  readonly jobs: readonly AnyJob[];
  /** The job runner's queue name. */
  readonly jobsQueueName: string;
}

/**
 * Resolves `schedules` as the host's scheduler will. Throws as `CronScheduler`'s constructor
 * does: INVALID_CONFIG for a value that is not an array, INVALID_ARGUMENT for a bad schedule or two
 * under one name.
 */
export function checkHostSchedules(schedules: unknown, plan: PlannedHost): ResolvedSchedule[] {
  const resolvers: ScheduleResolvers = {
    runtime: {
      queueName: plan.queueName,
      // As `WorkflowRuntime.workflowRun`: a StepRunner runtime checks nothing.
      workflowRun: (workflow: Workflow) => plan.workflows?.check(workflow),
    },
    jobs:
      plan.jobs.length === 0
        ? undefined
        : {
            queueName: plan.jobsQueueName,
            handle: (job: AnyJob) => {
              if (!plan.jobs.includes(job)) {
                throw new InvalidArgumentError(`job is not registered with this runner. job=${show(job?.name)}`, { reason: 'unregistered_job', job: typeof job?.name === 'string' ? job.name : null });
              }
            },
          },
  };
  return resolveDeclared(schedules, resolvers);
}
