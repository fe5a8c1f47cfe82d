/**
 * The commands. Read commands open a read-only `WorkflowReader` (no writer lock); write commands
 * (`signal`, `cancel`, `retry`) go through the live writer's command inbox when a live process
 * holds the store, and open the queue as the writer for one operation when none does. Runs are
 * looked for on every queue of the store unless `--queue` names one (see queues.ts).
 */
import type { ObjectStore } from '../core/objects/object-store.js';
import type { Queue } from '../core/queue/index.js';
import type { TerminalHook, TerminalStatus } from '../core/workflow/runs/terminal-hook.js';
import { WorkflowRuntime } from '../core/workflow/runtime.js';
import { StepError } from '../core/workflow/steps/step-error.js';
import { DEFAULT_QUEUE_NAME } from '../core/workflow/constants.js';
import { signalWaitKey } from '../core/workflow/keys.js';
import type { DurableRunState, RunSummary } from '../core/workflow/history/inspection.js';
import type { RunTimeline } from '../core/workflow/history/run-timeline.js';
import type { SignalOutcome } from '../core/workflow/runs/signals.js';
import { WorkflowReader } from '../core/workflow/history/workflow-reader.js';
import type { RunDetails } from '../core/workflow/history/inspection.js';
import type { JobRecord } from '../core/queue/index.js';
import { RuntimeClient } from '../core/workflow/commands/runtime-client.js';
import type { CommandRuntime } from '../core/workflow/commands/run-command.js';
import { applyOperation, COMMAND_NAMES, isHostCommand, type OperationCall, type RuntimeCommands } from '../core/operations/operation-list.js';
import { isTaqubaError } from '../core/errors.js';
import { CliError, EXIT_FAILURE, usageError } from './cli-error.js';
import { colorEnabled, makeColors } from './format.js';
import { document, jsonDead, jsonFinishedRun, jsonQueue, jsonRun, jsonTimeline, type JsonRun } from './json.js';
import { decodeFinishedCursor, encodeFinishedCursor, findActiveRun, listDeadOnQueues, listFinishedOnQueues, listRunsOnQueues, readersFor, selectQueues } from './queues.js';
import { openReader, openStore, openWriter, type StoreOptions } from './store.js';
import { deadView, finishedRunsView, queuesView, runsView, timelineView, type ViewContext } from './views.js';

/** Where a command writes, and what it knows of its terminal (injected so tests and `main` share it). */
export interface Io {
  out(text: string): void;
  readonly env: NodeJS.ProcessEnv;
  readonly isTty: boolean;
  /** Aborted on SIGINT / SIGTERM (ends `watch`). */
  readonly stop: AbortSignal;
  now(): number;
}

export interface GlobalOptions extends StoreOptions {
  readonly json?: boolean;
}

interface Session {
  readonly reader: WorkflowReader;
  /** One reader per queue looked at: `--queue`, else every queue of the store. */
  readonly readers: readonly WorkflowReader[];
  readonly store: ObjectStore;
  readonly path: string;
  readonly view: ViewContext;
  /** A document; `queue` defaults to `--queue` (null: every queue). */
  doc(command: string, body: Record<string, unknown>, queue?: string | null): string;
}

async function withReader<T>(io: Io, options: GlobalOptions, use: (s: Session) => Promise<T>): Promise<T> {
  const opened = await openStore(options);
  try {
    const { reader, path } = await openReader(opened, options);
    try {
      const readers = readersFor(reader, await selectQueues(reader.queue, options.queue));
      const nowMs = io.now();
      const view = { colors: makeColors(colorEnabled(io.env, io.isTty)), nowMs };
      const doc = (command: string, body: Record<string, unknown>, queue = options.queue ?? null) => document(command, { store: options.store, path, queue, nowMs: io.now() }, body);
      return await use({ reader, readers, store: opened.store, path, view, doc });
    } finally {
      await reader.close();
    }
  } finally {
    opened.close();
  }
}

const STATES: readonly DurableRunState[] = ['pending', 'scheduled', 'waiting-for-signal', 'waiting-for-slot', 'running', 'cancelling', 'dead'];
const FINISHED: readonly TerminalStatus[] = ['succeeded', 'failed', 'cancelled'];

/** What `--status` asks `runs` for: active runs (in these states, or all), or finished runs that ended in these states. */
export type StatusFilter = { readonly finished: false; readonly states: DurableRunState[] | undefined } | { readonly finished: true; readonly states: TerminalStatus[] };

const STATE_GROUPS = `active runs: ${STATES.join(', ')}; finished runs: ${FINISHED.join(', ')}`;

/**
 * `--status a,b` (or repeated): states of active runs, or states finished runs ended in, not both
 * (a listing is of one or the other); USAGE naming the valid ones otherwise.
 */
export function parseStatus(values: readonly string[] | undefined): StatusFilter {
  if (values === undefined) return { finished: false, states: undefined };
  const states = values.flatMap((v) => v.split(',')).filter((s) => s !== '');
  for (const s of states) {
    if (!STATES.includes(s as DurableRunState) && !FINISHED.includes(s as TerminalStatus)) {
      throw usageError(`unknown run state. status=${JSON.stringify(s)}`, `one of ${STATES.join(', ')} (active runs) or ${FINISHED.join(', ')} (finished runs)`);
    }
  }
  const finished = states.filter((s) => FINISHED.includes(s as TerminalStatus));
  if (finished.length === 0) return { finished: false, states: states as DurableRunState[] };
  if (finished.length < states.length) {
    const active = states.filter((s) => !FINISHED.includes(s as TerminalStatus));
    throw usageError(
      `--status mixes states of active runs (${active.join(',')}) with states of finished runs (${finished.join(',')}). status=${JSON.stringify(states.join(','))}`,
      `a listing is of active runs or of finished runs, not both (${STATE_GROUPS}); list each with its own taquba runs`,
    );
  }
  return { finished: true, states: [...new Set(finished as TerminalStatus[])] };
}

const encodeCursor = (cursor: Uint8Array | undefined): string | null => (cursor === undefined ? null : Buffer.from(cursor).toString('base64url'));
function decodeCursor(text: string | undefined): Uint8Array | undefined {
  if (text === undefined) return undefined;
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw usageError(`not a cursor printed by taquba runs. after=${JSON.stringify(text)}`);
  if (decodeFinishedCursor(text) !== undefined) throw usageError(`this cursor pages a listing of finished runs. after=${JSON.stringify(text)}`, 'give the --status of finished states it was printed with again');
  return new Uint8Array(Buffer.from(text, 'base64url'));
}

/** A run row: the summary with its details (attempts, wait), read after the summary from the reader of its queue. */
async function runRow(reader: WorkflowReader, summary: RunSummary): Promise<JsonRun> {
  const details = summary.state === null ? null : await reader.getRun(summary.runId).catch(() => null);
  return jsonRun(summary, details, reader.queueName);
}

export async function runsCommand(io: Io, options: GlobalOptions, local: { status?: string[]; limit: number; after?: string }): Promise<void> {
  const status = parseStatus(local.status);
  if (status.finished) return finishedRunsCommand(io, options, { status: status.states, limit: local.limit, after: local.after });
  const cursor = decodeCursor(local.after);
  await withReader(io, options, async (s) => {
    const page = await listRunsOnQueues(s.readers, { status: status.states, limit: local.limit, cursor });
    const runs = await Promise.all(page.runs.map((r) => runRow(r.reader, r.summary)));
    const next = encodeCursor(page.nextCursor);
    io.out(options.json ? s.doc('runs', { runs, nextCursor: next }) : runsView(runs, next, s.view, s.readers.length > 1));
  });
}

/** `runs --status` of terminal states: finished runs still kept (the writer's `outcomeRetentionMs`), over the queues looked at. */
async function finishedRunsCommand(io: Io, options: GlobalOptions, local: { status: TerminalStatus[]; limit: number; after?: string }): Promise<void> {
  const cursor = local.after === undefined ? undefined : decodeFinishedCursor(local.after);
  if (local.after !== undefined && cursor === undefined) {
    throw usageError(`not a cursor printed by taquba runs for finished runs. after=${JSON.stringify(local.after)}`, 'pass the --after value a page of taquba runs --status <finished states> printed');
  }
  await withReader(io, options, async (s) => {
    const page = await listFinishedOnQueues(s.readers, { status: local.status, limit: local.limit, cursor });
    const runs = page.runs.map((r) => jsonFinishedRun(r.run, r.reader.queueName));
    const next = page.next === undefined ? null : encodeFinishedCursor(page.next);
    io.out(options.json ? s.doc('runs', { runs, nextCursor: next }) : finishedRunsView(runs, next, s.view, s.readers.length > 1, local.status));
  });
}

/**
 * The run's timeline from the queue it is on: the one it is active on, else the one queue still
 * holding traces of it (USAGE when several do: the id was used by runtimes on several queues).
 * Null queue: nothing stored on any queue looked at.
 */
async function findTimeline(s: Session, options: GlobalOptions, runId: string): Promise<{ timeline: RunTimeline; queue: string | null }> {
  const active = await findActiveRun(s.readers, runId);
  // With no queue at all, the base reader still answers (unknown), after validating the id.
  const candidates = active ? [active] : s.readers.length > 0 ? s.readers : [s.reader];
  const timelines = await Promise.all(candidates.map((r) => r.getRunTimeline(runId, { store: s.store, memoPrefix: options.memoPrefix })));
  const known = candidates.map((r, i) => ({ timeline: timelines[i]!, queue: r.queueName })).filter((k) => k.timeline.status !== 'unknown');
  if (known.length > 1) throw usageError(`the run has traces on several queues. runId=${JSON.stringify(runId)} queues=${known.map((k) => k.queue).join(',')}`, 'pick one with --queue');
  return known[0] ?? { timeline: timelines[0]!, queue: null };
}

export async function runCommand(io: Io, options: GlobalOptions, runId: string): Promise<void> {
  await withReader(io, options, async (s) => {
    const { timeline, queue } = await findTimeline(s, options, runId);
    io.out(options.json ? s.doc('run', { run: jsonTimeline(timeline, queue) }, queue ?? options.queue ?? null) : timelineView(timeline, s.view, queue ?? undefined));
    if (timeline.status === 'unknown') {
      const searched = s.readers.map((r) => r.queueName).join(',') || '(none)';
      throw new CliError('NOT_FOUND', `no run with this id in the store. runId=${JSON.stringify(runId)} queues=${searched}`, 'list active runs with: taquba runs');
    }
  });
}

export async function deadCommand(io: Io, options: GlobalOptions, local: { limit: number; after?: string }): Promise<void> {
  await withReader(io, options, async (s) => {
    const rows = await listDeadOnQueues(s.readers, { limit: local.limit, afterJobId: local.after });
    const next = rows.length === local.limit ? rows[rows.length - 1]!.dead.jobId : null;
    const deadSteps = rows.map((r) => jsonDead(r.dead, r.reader.queueName));
    io.out(
      options.json
        ? s.doc('dead', { deadSteps, nextAfter: next })
        : deadView(
            rows.map((r) => r.dead),
            s.view,
            s.readers.length > 1 ? rows.map((r) => r.reader.queueName) : undefined,
          ),
    );
  });
}

export async function queuesCommand(io: Io, options: GlobalOptions): Promise<void> {
  await withReader(io, options, async (s) => {
    const names = await s.reader.queue.listQueues();
    const stats = await Promise.all(names.map((n) => s.reader.queue.stats(n)));
    const activity = s.reader.queue.lastStoreActivity();
    const beat = await s.reader.queue.writerHeartbeat();
    const writer = { epoch: activity.writerEpoch, durableSeq: activity.durableSeq, heartbeat: beat === undefined ? null : { atMs: beat.atMs, closed: beat.closed } };
    io.out(options.json ? s.doc('queues', { queues: stats.map(jsonQueue), writer }) : queuesView(stats, s.view));
  });
}

/** Every active run on the queues looked at (up to `max`), for `watch`. */
async function allRuns(readers: readonly WorkflowReader[], max: number): Promise<JsonRun[]> {
  const out: JsonRun[] = [];
  let cursor: Uint8Array | undefined;
  do {
    const page = await listRunsOnQueues(readers, { cursor, limit: Math.min(100, max - out.length) });
    out.push(...(await Promise.all(page.runs.map((r) => runRow(r.reader, r.summary)))));
    cursor = page.nextCursor;
  } while (cursor !== undefined && out.length < max);
  return out;
}

/** What changed about a run between two polls, for `watch`. */
function runChange(before: JsonRun | undefined, after: JsonRun): boolean {
  if (!before) return true;
  return before.state !== after.state || before.currentStep !== after.currentStep || before.attempts !== after.attempts || before.jobId !== after.jobId;
}

export async function watchCommand(io: Io, options: GlobalOptions, local: { interval: number; maxRuns: number }): Promise<void> {
  await withReader(io, options, async (s) => {
    const c = s.view.colors;
    let runs = new Map<string, JsonRun>();
    let queues = new Map<string, string>();
    let first = true;
    while (!io.stop.aborted) {
      await s.reader.refresh();
      const nowMs = io.now();
      const view = { ...s.view, nowMs };
      const names = await s.reader.queue.listQueues();
      // Without --queue, a queue the writer starts using while this runs is followed too.
      const readers = options.queue === undefined ? readersFor(s.reader, names) : s.readers;
      const current = await allRuns(readers, local.maxRuns);
      const stats = await Promise.all(names.map((n) => s.reader.queue.stats(n)));
      if (first) {
        io.out(options.json ? s.doc('watch', { type: 'snapshot', runs: current, queues: stats.map(jsonQueue) }) : `${runsView(current, null, view, readers.length > 1)}\n\n${queuesView(stats, view)}`);
      } else {
        const stamp = c.dim(new Date(nowMs).toISOString().slice(11, 19));
        for (const run of current) {
          const before = runs.get(run.runId);
          if (!runChange(before, run)) continue;
          const change = before ? 'changed' : 'added';
          io.out(options.json ? s.doc('watch', { type: 'run', change, run }) : `${stamp} ${change === 'added' ? c.green('+') : c.yellow('~')} run ${run.runId} ${run.state ?? 'unsettled'} step ${run.currentStep ?? '-'}${run.lastError ? ` ${c.red(run.lastError)}` : ''}`);
        }
        const ids = new Set(current.map((r) => r.runId));
        for (const [id, run] of runs) {
          if (!ids.has(id)) io.out(options.json ? s.doc('watch', { type: 'run', change: 'removed', run }) : `${stamp} ${c.dim('-')} run ${id} ended`);
        }
        for (const q of stats) {
          const line = JSON.stringify(jsonQueue(q));
          if (queues.get(q.queue) === line) continue;
          io.out(options.json ? s.doc('watch', { type: 'queue', queue: jsonQueue(q) }) : `${stamp} queue ${q.queue}: pending ${q.pending} scheduled ${q.scheduled} claimed ${q.claimed} done ${q.done} dead ${q.dead}`);
        }
      }
      first = false;
      runs = new Map(current.map((r) => [r.runId, r]));
      queues = new Map(stats.map((q) => [q.queue, JSON.stringify(jsonQueue(q))]));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, local.interval);
        io.stop.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  });
}

/**
 * A runtime for one write operation: it never runs steps or notifications (no `run`/`spawn`), so
 * neither the runner nor the hook is called. The hook observes every outcome, so a cancel enqueues
 * the run's notification and the application's own runtime delivers it to its hook.
 */
function operatorRuntime(queue: Queue, store: ObjectStore, options: GlobalOptions, queueName: string): WorkflowRuntime {
  const refuse = async (): Promise<never> => {
    throw StepError.transient('the taquba CLI does not run steps');
  };
  const hook: TerminalHook = { onTermination: refuse };
  return new WorkflowRuntime(queue, store, refuse, hook, { queueName, memoPrefix: options.memoPrefix, logger: false });
}

/** What a write command works with, whichever way it reaches the store. */
interface OperatorSession {
  readonly path: string;
  /** `writer`: the CLI opened the store as its writer; `live-writer`: a live writer applied the command (its inbox). */
  readonly via: 'writer' | 'live-writer';
  listQueues(): Promise<string[]>;
  getJob(jobId: string): Promise<JobRecord | undefined>;
  kvGet(key: Uint8Array): Promise<Uint8Array | undefined>;
  /** The run's details on `queueName`, or null. */
  getRun(queueName: string, runId: string): Promise<RunDetails | null>;
  /** The write operations of the runtime of `queueName`. */
  runtime(queueName: string): RuntimeCommands;
}

/**
 * Runs `use` with the store's write operations: as its writer when no live writer holds it
 * (closing after, which releases the lock), else through the live writer's command inbox, whose
 * running runtime applies each command once (`--command-id` makes a retry the same command).
 */
async function withOperator<T>(options: GlobalOptions, local: WriteOptions, use: (s: OperatorSession) => Promise<T>): Promise<T> {
  const opened = await openStore(options);
  try {
    const access = await openWriter(opened, options, local.force ?? false);
    if (access.kind === 'writer') {
      const { queue, path } = access;
      const runtime = (queueName: string): WorkflowRuntime => operatorRuntime(queue, opened.store, options, queueName);
      try {
        return await use({
          path,
          via: 'writer',
          listQueues: () => queue.listQueues(),
          getJob: (id) => queue.getJob(id),
          kvGet: (key) => queue.kvGet(key),
          getRun: (q, id) => runtime(q).getRun(id),
          runtime: (q) => applied(runtime(q), local, (e) => e),
        });
      } finally {
        await queue.close();
      }
    }
    const { reader, path } = await openReader(opened, options);
    const timeoutMs = (local.timeout ?? DEFAULT_COMMAND_TIMEOUT_S) * 1000;
    const clients: RuntimeClient[] = [];
    try {
      return await use({
        path,
        via: 'live-writer',
        listQueues: () => reader.queue.listQueues(),
        getJob: (id) => reader.queue.getJob(id),
        kvGet: (key) => reader.queue.kvGet(key),
        getRun: (q, id) => new WorkflowReader(reader.queue, { queueName: q }).getRun(id),
        runtime: (queueName) => {
          const client = new RuntimeClient(opened.store, { path, queueName, timeoutMs });
          clients.push(client);
          return applied(client, local, (e) => explainTimeout(e, access.why, { ...local, hasWriterLock: opened.hasWriterLock }));
        },
      });
    } finally {
      for (const c of clients) c.close();
      await reader.close();
    }
  } finally {
    opened.close();
  }
}

/** Seconds a command sent to a live writer waits for its answer. */
export const DEFAULT_COMMAND_TIMEOUT_S = 30;

/** `runtime`'s write operations, each carrying the command id given (`--command-id`), errors through `explain`. */
function applied(runtime: CommandRuntime, local: WriteOptions, explain: (e: unknown) => unknown): RuntimeCommands {
  const once = local.commandId === undefined ? {} : { commandId: local.commandId };
  const fail = (e: unknown): never => {
    throw explain(e);
  };
  type RuntimeCommandName = keyof RuntimeCommands;
  const command = (method: RuntimeCommandName) => (...args: unknown[]) => applyOperation(runtime, { method, args, ...once } as OperationCall & { method: RuntimeCommandName }).catch(fail);
  const names = COMMAND_NAMES.filter((name): name is RuntimeCommandName => !isHostCommand(name));
  return Object.fromEntries(names.map((method) => [method, command(method)])) as RuntimeCommands;
}

/** A live writer's TIMEOUT, saying what to do (the command may still apply). */
export function explainTimeout(e: unknown, why: string, local: WriteOptions): unknown {
  if (!isTaqubaError(e, 'TIMEOUT')) return e;
  const id = String(e.details.commandId);
  return new CliError(
    'TIMEOUT',
    `the store's live writer did not answer within ${local.timeout ?? DEFAULT_COMMAND_TIMEOUT_S} s (${why}); the command may still apply when it does. commandId=${id}`,
    `is the process holding the store running a WorkflowRuntime (run or spawn, commandPollMs not null)? Send it again with --command-id ${id} to have it applied once${local.hasWriterLock ? '' : ', or, if no process writes this store, add --force'}`,
    EXIT_FAILURE,
    { cause: e },
  );
}

/** The queue whose runtime should take a signal for `key` when `--queue` names none. */
async function signalQueue(session: OperatorSession, key: string): Promise<string> {
  const waiter = await session.kvGet(signalWaitKey(key));
  const job = waiter === undefined ? undefined : await session.getJob(new TextDecoder().decode(waiter));
  if (job !== undefined) return job.queue;
  const queues = await session.listQueues();
  return queues.includes(DEFAULT_QUEUE_NAME) || queues.length === 0 ? DEFAULT_QUEUE_NAME : queues[0]!;
}

/** Options of the write commands. */
export interface WriteOptions {
  /** Set by `withOperator`: whether the store has a writer lock (then `--force` changes nothing). */
  readonly hasWriterLock?: boolean;
  readonly force?: boolean;
  /** Seconds to wait for a live writer's answer. */
  readonly timeout?: number;
  /** The command's id, to send a command again after a TIMEOUT (applied once). */
  readonly commandId?: string;
}

function context(io: Io, options: GlobalOptions, path: string, queue: string) {
  return { store: options.store, path, queue, nowMs: io.now() };
}

/** What the CLI says for each signal outcome. */
const SIGNAL_OUTCOME_TEXT: Readonly<Record<SignalOutcome, string>> = {
  delivered: 'delivered: a waiting run was woken',
  buffered: 'buffered for the next waiter of this key',
  'run-not-active': 'not sent: no active run under this id (it ended, or was never started)',
};

export async function signalCommand(io: Io, options: GlobalOptions, key: string, payloadText: string, local: WriteOptions & { base64?: boolean }): Promise<void> {
  if (local.base64 && !/^[A-Za-z0-9+/]*={0,2}$/.test(payloadText)) throw usageError('payload is not base64 (--base64 was given)');
  const payload = local.base64 ? new Uint8Array(Buffer.from(payloadText, 'base64')) : new TextEncoder().encode(payloadText);
  await withOperator(options, local, async (session) => {
    const { runtime, path, via } = session;
    // Signals are keyed by correlation key, not by queue: any runtime of the engine reaches the
    // waiting run. Through a live writer, the runtime of a queue it serves must answer: the
    // waiting run's own, else the default one when the store has it, else its first queue.
    const queueName = options.queue ?? (await signalQueue(session, key));
    const outcome = await runtime(queueName).signal(key, payload);
    io.out(options.json ? document('signal', context(io, options, path, queueName), { correlationKey: key, outcome, via }) : `signal ${JSON.stringify(key)} ${SIGNAL_OUTCOME_TEXT[outcome]}`);
    if (outcome === 'run-not-active') throw new CliError('NOT_FOUND', `no active run to signal. correlationKey=${JSON.stringify(key)}`, 'list active runs with: taquba runs');
  });
}

export async function cancelCommand(io: Io, options: GlobalOptions, runId: string, local: WriteOptions): Promise<void> {
  await withOperator(options, local, async ({ listQueues, getRun, runtime, path, via }) => {
    // The runtime of the queue the run is active on (a run's steps are on exactly one queue).
    const names = await selectQueues({ listQueues }, options.queue);
    const found = await Promise.all(names.map((name) => getRun(name, runId)));
    const queueName = names[found.findIndex((run) => run !== null)] ?? options.queue ?? DEFAULT_QUEUE_NAME;
    const cancelled = await runtime(queueName).cancel(runId);
    io.out(options.json ? document('cancel', context(io, options, path, queueName), { runId, cancelled, via }) : cancelled ? `run ${runId} cancelled` : `run ${runId}: not active (unknown, already ended, or its step is dead)`);
    if (!cancelled) throw new CliError('NOT_FOUND', `no active run to cancel. runId=${JSON.stringify(runId)}`, 'list active runs with: taquba runs');
  });
}

export async function retryCommand(io: Io, options: GlobalOptions, jobId: string, local: WriteOptions): Promise<void> {
  await withOperator(options, local, async ({ listQueues, getJob, runtime, path, via }) => {
    // The runtime of the job's own queue, when it is one of those looked at.
    const names = await selectQueues({ listQueues }, options.queue);
    const job = await getJob(jobId);
    const queueName = job !== undefined && names.includes(job.queue) ? job.queue : (options.queue ?? DEFAULT_QUEUE_NAME);
    const kind = await runtime(queueName).retryDeadStep(jobId).catch((e: unknown) => {
      if (isTaqubaError(e, 'NOT_FOUND')) throw new CliError('NOT_FOUND', e.message, 'list dead jobs with: taquba dead', EXIT_FAILURE, { cause: e });
      if (isTaqubaError(e, 'CONFLICT')) throw new CliError('CONFLICT', e.message, 'the run id was submitted again; discard this dead step, or cancel the new run first', EXIT_FAILURE, { cause: e });
      throw e;
    });
    const what = kind === 'step' ? 'the run resumes from this step' : kind === 'revived' ? 'the run it failed is active again from this step' : kind === 'notification' ? "the run's terminal hook is called again" : 'requeued as is';
    io.out(options.json ? document('retry', context(io, options, path, queueName), { jobId, requeued: true, kind, via }) : `job ${jobId} re-enqueued with fresh attempts: ${what} at the writer's next worker pass`);
  });
}
