/**
 * Which runtime queues a command looks at. The runs of one engine share a single run-id keyspace;
 * each run's steps go to the queue of the runtime that submitted it (`WorkflowRuntime`'s
 * `queueName`: `workflow-steps` by default, `approvals` in examples/durable-approvals.ts). So,
 * without `--queue`, the run commands look on every queue of the store (`listQueues`: each queue
 * that ever had a job) and tell which queue each run is on; with `--queue`, on that one queue,
 * which must exist (UNKNOWN_QUEUE otherwise: a mistyped name used to list nothing, silently).
 */
import type { FinishedRun } from '../core/workflow/history/finished-runs.js';
import type { DeadStep, RunListOptions, RunSummary } from '../core/workflow/history/inspection.js';
import type { TerminalStatus } from '../core/workflow/runs/terminal-hook.js';
import { WorkflowReader } from '../core/workflow/history/workflow-reader.js';
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

/**
 * Where a listing of finished runs stands between pages. Finished-run records are kept per queue
 * (`workflow/outcomes/{queue}/{run}`), so, unlike active runs, each queue's listing has its own
 * engine cursor: `positions` keeps one per queue (null: that queue had nothing more; a queue not
 * named lists from its start), and `after` is the last row printed, by run id then queue. Rows up
 * to `after` are skipped wherever they turn up, so a position is only a shortcut: a queue first
 * seen on a later page (or after `--queue` changed) lists from its start without repeating rows.
 */
export interface FinishedCursor {
  readonly after: { readonly runId: string; readonly queue: string };
  readonly positions: ReadonlyMap<string, Uint8Array | null>;
}

export interface QueuedFinishedRun {
  readonly run: FinishedRun;
  readonly reader: WorkflowReader;
}

/** Rows order of a finished listing: run id (key order), then queue (one id may have ended on several queues). */
const rowOrder = (a: { runId: string; queue: string }, b: { runId: string; queue: string }): number => keyOrder(a.runId, b.runId) || keyOrder(a.queue, b.queue);

/** How many of `runs` (of `queue`, in run-id order) come at or before `after`: always a leading part. */
function leadingUpTo(runs: readonly FinishedRun[], queue: string, after: FinishedCursor['after'] | undefined): number {
  if (after === undefined) return 0;
  let n = 0;
  while (n < runs.length && rowOrder({ runId: runs[n]!.runId, queue }, after) <= 0) n++;
  return n;
}

/**
 * The first `limit` finished runs of one queue after `after`, listed from `position`: `base` is
 * where the listing that found them started, `skipped` how many runs at or before `after` it met
 * first, `nextCursor` the cursor after the last run returned (undefined: none after it).
 */
async function finishedOnQueue(
  reader: WorkflowReader,
  status: readonly TerminalStatus[],
  position: Uint8Array | undefined,
  after: FinishedCursor['after'] | undefined,
  limit: number,
): Promise<{ base: Uint8Array | undefined; skipped: number; runs: FinishedRun[]; nextCursor: Uint8Array | undefined }> {
  let base = position;
  for (;;) {
    const page = await reader.listRuns({ status, limit, cursor: base });
    const skipped = leadingUpTo(page.runs, reader.queueName, after);
    // A whole page already printed (a queue listed from its start): go on past it.
    if (skipped > 0 && skipped === page.runs.length && page.nextCursor !== undefined) {
      base = page.nextCursor;
      continue;
    }
    if (skipped === 0 || page.nextCursor === undefined) return { base, skipped, runs: page.runs.slice(skipped), nextCursor: page.nextCursor };
    // Some printed, the page full: the same listing, longer by those, holds `limit` new ones.
    const again = await reader.listRuns({ status, limit: skipped + limit, cursor: base });
    const skippedAgain = leadingUpTo(again.runs, reader.queueName, after);
    return { base, skipped: skippedAgain, runs: again.runs.slice(skippedAgain), nextCursor: again.nextCursor };
  }
}

/**
 * One page of finished runs (`status`: terminal states only) over several queues, in run-id
 * order (then queue), with where the next page starts (undefined: this was the last).
 *
 * Each queue lists its first `limit` runs after the cursor's `after`, so the first `limit` of
 * their merge are the first over all the queues. A queue whose runs were all kept goes on from
 * its own listing's cursor; one with some kept from the cursor after its last kept run (its
 * listing again, up to that run: a full page of `listRuns` ends right after its last run); one
 * with none kept from where it started.
 */
export async function listFinishedOnQueues(
  readers: readonly WorkflowReader[],
  options: { readonly status: readonly TerminalStatus[]; readonly limit: number; readonly cursor?: FinishedCursor },
): Promise<{ runs: QueuedFinishedRun[]; next: FinishedCursor | undefined }> {
  const { status, limit, cursor } = options;
  if (limit === 0) return { runs: [], next: undefined };
  const live = readers.filter((reader) => cursor?.positions.get(reader.queueName) !== null);
  const pages = await Promise.all(live.map((reader) => finishedOnQueue(reader, status, cursor?.positions.get(reader.queueName) ?? undefined, cursor?.after, limit)));
  const rows = pages.flatMap((page, queue) => page.runs.map((run, index) => ({ run, queue, index })));
  const kept = rows.sort((a, b) => rowOrder({ runId: a.run.runId, queue: live[a.queue]!.queueName }, { runId: b.run.runId, queue: live[b.queue]!.queueName })).slice(0, limit);
  const runs = kept.map((k) => ({ run: k.run, reader: live[k.queue]! }));
  // Fewer than a page: no queue listed a full page, so each reached its end.
  if (kept.length < limit) return { runs, next: undefined };
  const positions = new Map(cursor?.positions ?? []);
  const keptOf = live.map((_, queue) => kept.filter((k) => k.queue === queue).length);
  await Promise.all(
    live.map(async (reader, queue) => {
      const page = pages[queue]!;
      const n = keptOf[queue]!;
      let at: Uint8Array | null | undefined;
      if (n === page.runs.length) at = page.nextCursor ?? null;
      else if (n === 0) at = page.base;
      // Listed again up to its last kept run; should that come out short (the store moved), from where it started.
      else at = (await reader.listRuns({ status, limit: page.skipped + n, cursor: page.base })).nextCursor ?? page.base;
      if (at === undefined) positions.delete(reader.queueName);
      else positions.set(reader.queueName, at);
    }),
  );
  if (readers.every((reader) => positions.get(reader.queueName) === null)) return { runs, next: undefined };
  const last = runs[runs.length - 1]!;
  return { runs, next: { after: { runId: last.run.runId, queue: last.reader.queueName }, positions } };
}

/** The text of a finished listing's cursor (what `--after` takes): base64url JSON. */
export function encodeFinishedCursor(cursor: FinishedCursor): string {
  const at: Record<string, string | null> = {};
  for (const [queue, position] of cursor.positions) at[queue] = position === null ? null : Buffer.from(position).toString('base64url');
  return Buffer.from(JSON.stringify({ v: 1, after: [cursor.after.runId, cursor.after.queue], at })).toString('base64url');
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The cursor a finished listing printed, or undefined when `text` is not one. */
export function decodeFinishedCursor(text: string): FinishedCursor | undefined {
  if (!BASE64URL.test(text)) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null) return undefined;
  const { v, after, at } = doc as { v?: unknown; after?: unknown; at?: unknown };
  if (v !== 1 || !Array.isArray(after) || after.length !== 2 || typeof after[0] !== 'string' || typeof after[1] !== 'string') return undefined;
  if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
  const positions = new Map<string, Uint8Array | null>();
  for (const [queue, position] of Object.entries(at)) {
    if (position === null) positions.set(queue, null);
    else if (typeof position === 'string' && position !== '' && BASE64URL.test(position)) positions.set(queue, new Uint8Array(Buffer.from(position, 'base64url')));
    else return undefined;
  }
  return { after: { runId: after[0], queue: after[1] }, positions };
}
