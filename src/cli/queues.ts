/**
 * Which runtime queues a command looks at. The runs of one engine share a single run-id keyspace;
 * each run's steps go to the queue of the runtime that submitted it (`WorkflowRuntime`'s
 * `queueName`: `workflow-steps` by default, `approvals` in examples/durable-approvals.ts). So,
 * without `--queue`, the run commands look on every queue of the store (`listQueues`: each queue
 * that ever had a job) and tell which queue each run is on; with `--queue`, on that one queue,
 * which must exist (UNKNOWN_QUEUE otherwise: a mistyped name used to list nothing, silently).
 */
import type { DeadStep, RunListOptions, RunSummary } from '../core/workflow/inspection.js';
import { WorkflowReader } from '../core/workflow/workflow-reader.js';
import { CliError, EXIT_USAGE } from './cli-error.js';

/** What lists the queues: a `QueueReader`, or the writer's `Queue`. */
export interface QueueLister {
  listQueues(): Promise<string[]>;
}

/** A queue name the store does not have: a usage error naming the queues it has. */
export function unknownQueue(name: string, found: readonly string[]): CliError {
  return new CliError(
    'UNKNOWN_QUEUE',
    `no queue of this name in the store. queue=${JSON.stringify(name)} queues=${found.length === 0 ? '(none)' : found.join(',')}`,
    'leave out --queue to look on every queue of the store, or name one of those',
    EXIT_USAGE,
  );
}

/** `[named]` when the store has that queue (UNKNOWN_QUEUE otherwise), else every queue of the store, sorted. */
export async function selectQueues(lister: QueueLister, named: string | undefined): Promise<string[]> {
  const found = await lister.listQueues();
  if (named === undefined) return found;
  if (!found.includes(named)) throw unknownQueue(named, found);
  return [named];
}

/** One `WorkflowReader` per queue name, all borrowing the queue reader of `base`. */
export function readersFor(base: WorkflowReader, names: readonly string[]): WorkflowReader[] {
  return names.map((queueName) => new WorkflowReader(base.queue, { queueName }));
}

/** Key order of the engine (bytes), which listings follow; ids are ASCII, but this costs nothing. */
const keyOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

export interface QueuedRun {
  readonly summary: RunSummary;
  /** The reader of the run's queue (for its details). */
  readonly reader: WorkflowReader;
}

/**
 * One page of active runs over several queues, in run-id order, with the cursor of the next page
 * (the same cursors as `listRuns`: every queue's listing scans the one run keyspace).
 *
 * Each queue's page of `limit` from `cursor` holds that queue's first runs, so the first `limit`
 * of their merge are the first runs over all the queues. The next page starts right after the
 * last one kept: a queue's own page ends right after its last run (listRuns stops its scan on the
 * run that fills the page), so listing the last run's queue up to that run gives the cursor. A run
 * that would not settle (state null) is listed on every queue, its own being unknown: kept once.
 */
export async function listRunsOnQueues(readers: readonly WorkflowReader[], options: RunListOptions & { readonly limit: number }): Promise<{ runs: QueuedRun[]; nextCursor: Uint8Array | undefined }> {
  const pages = await Promise.all(readers.map((reader) => reader.listRuns(options)));
  if (readers.length === 1) return { runs: pages[0]!.runs.map((summary) => ({ summary, reader: readers[0]! })), nextCursor: pages[0]!.nextCursor };
  const first = new Map<string, { summary: RunSummary; queue: number; index: number }>();
  pages.forEach((page, queue) =>
    page.runs.forEach((summary, index) => {
      if (!first.has(summary.runId)) first.set(summary.runId, { summary, queue, index });
    }),
  );
  const kept = [...first.values()].sort((a, b) => keyOrder(a.summary.runId, b.summary.runId)).slice(0, options.limit);
  const runs = kept.map((k) => ({ summary: k.summary, reader: readers[k.queue]! }));
  // Fewer than a page: no queue's page was full, so every queue's listing reached the end.
  if (options.limit === 0 || kept.length < options.limit) return { runs, nextCursor: undefined };
  const last = kept[kept.length - 1]!;
  if (last.index === options.limit - 1) return { runs, nextCursor: pages[last.queue]!.nextCursor };
  const upToLast = await readers[last.queue]!.listRuns({ ...options, limit: last.index + 1 });
  return { runs, nextCursor: upToLast.nextCursor };
}

/**
 * One page of dead steps over several queues, in job-id order: each queue's dead jobs are listed
 * in that order after `afterJobId`, so the merge of their first `limit` is the first `limit` over
 * all, and the last job id kept is the next page's `afterJobId`.
 */
export async function listDeadOnQueues(readers: readonly WorkflowReader[], options: { readonly limit: number; readonly afterJobId?: string }): Promise<{ dead: DeadStep; reader: WorkflowReader }[]> {
  const pages = await Promise.all(readers.map(async (reader) => (await reader.listDeadSteps(options)).map((dead) => ({ dead, reader }))));
  return pages
    .flat()
    .sort((a, b) => keyOrder(a.dead.jobId, b.dead.jobId))
    .slice(0, options.limit);
}

/** The reader of the queue the run `runId` is active on, if it is active on one of them (a run's step job is on exactly one queue). */
export async function findActiveRun(readers: readonly WorkflowReader[], runId: string): Promise<WorkflowReader | undefined> {
  const found = await Promise.all(readers.map((reader) => reader.getRun(runId)));
  const index = found.findIndex((run) => run !== null);
  return index < 0 ? undefined : readers[index];
}
