/**
 * What the inspector reads, and from where: the store's active runs (through the client, with a
 * state filter), the finished runs the store keeps records of (`outcomeRetentionMs`), the runs
 * the app or this page's events know of that ended otherwise, and one run in detail (its record
 * and outcome, memo entries, buffered signals, the app's KV values). Plain data out; the element
 * decides how to draw it.
 */
import type { DurableRunState, RunDetails, RunTimeline, TerminalStatus } from '../../core/workflow/index.js';
import type { WorkflowClient } from '../client.js';
import type { MemoEntryView } from '../protocol.js';
import { storedEnding, type RunDescription, type RunEnding, type RunObserver } from './timeline.js';

/** The client operations the inspector uses (a `WorkflowClient` from `connect` has them all). */
export type InspectorClient = Pick<
  WorkflowClient,
  'listRuns' | 'listFinishedRuns' | 'runTimeline' | 'status' | 'listMemo' | 'bufferedSignal' | 'queueCounts' | 'listDeadSteps' | 'retryDeadStep' | 'discardDeadStep' | 'kvScan' | 'subscribe'
> &
  // Optional: a client without it shows no schedules.
  Partial<Pick<WorkflowClient, 'listSchedules'>>;

/** What an app may tell the inspector; everything is optional. */
export interface InspectorOptions {
  /** Titles, step names (and steps still to come), endings, signal keys and KV prefixes of a run. */
  readonly describeRun?: (runId: string) => RunDescription | undefined | Promise<RunDescription | undefined>;
  /** Runs the app keeps a record of, listed even after they ended (the store lists finished runs only while it keeps their records). */
  readonly knownRuns?: () => readonly string[] | Promise<readonly string[]>;
  /** Memo key names the app uses (memo keys are stored hashed; named entries show their name). */
  readonly memoKeys?: readonly string[];
  /**
   * A stored value as text, or undefined for the inspector's own decoding (JSON, text, MessagePack,
   * hex). `call`: the value of a workflow function's `ctx` call (key: the step's or signal's name,
   * else the call's kind), in the value codec's encoding, as is a function run's `result`.
   */
  readonly formatValue?: (bytes: Uint8Array, where: { readonly kind: 'kv' | 'memo' | 'signal' | 'result' | 'call'; readonly key: string }) => string | undefined;
  /** Re-read interval while the page is visible, ms; default 2000, 0 for events only. */
  readonly pollMs?: number;
}

export type RunState = DurableRunState | TerminalStatus | 'ended';

export interface RunRow {
  readonly runId: string;
  readonly state: RunState;
  readonly currentStep: number | null;
  readonly submittedAtMs: number | null;
  /** When the run ended, when known. */
  readonly endedAtMs: number | null;
  readonly description: RunDescription | undefined;
}

export interface RunDetailView {
  readonly runId: string;
  readonly details: RunDetails | null;
  /** What the store keeps of the run (kept step jobs, terminal outcome). */
  readonly stored: RunTimeline;
  readonly description: RunDescription | undefined;
  readonly ending: RunEnding | undefined;
  readonly memo: readonly MemoEntryView[];
  readonly signals: readonly { readonly key: string; readonly buffered: Uint8Array | null; readonly waiting: boolean }[];
  readonly kv: readonly (readonly [string, Uint8Array])[];
}

export const STATE_TEXT: Readonly<Record<RunState, string>> = {
  pending: 'Pending',
  running: 'Running',
  cancelling: 'Cancelling',
  'waiting-for-signal': 'Waiting for a signal',
  'waiting-for-slot': 'Waiting for a slot',
  scheduled: 'Scheduled',
  dead: 'Dead-lettered',
  succeeded: 'Succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
  ended: 'Ended',
};

export const ACTIVE: ReadonlySet<RunState> = new Set<RunState>(['pending', 'running', 'cancelling', 'waiting-for-signal', 'waiting-for-slot', 'scheduled', 'dead']);

/** The run-list filter: a value of the select, and which states it keeps. */
export const FILTERS: readonly { readonly value: string; readonly label: string; readonly states: readonly RunState[] | null }[] = [
  { value: 'all', label: 'All runs', states: null },
  { value: 'active', label: 'Active', states: ['pending', 'running', 'cancelling', 'waiting-for-signal', 'waiting-for-slot', 'scheduled', 'dead'] },
  { value: 'running', label: 'Running', states: ['running', 'cancelling'] },
  { value: 'waiting-for-signal', label: 'Waiting for a signal', states: ['waiting-for-signal'] },
  { value: 'waiting-for-slot', label: 'Waiting for a slot (concurrency limit)', states: ['waiting-for-slot'] },
  { value: 'scheduled', label: 'Scheduled (retry or delay)', states: ['scheduled'] },
  { value: 'pending', label: 'Pending', states: ['pending'] },
  { value: 'ended', label: 'Ended', states: ['succeeded', 'failed', 'cancelled', 'ended'] },
  { value: 'succeeded', label: 'Succeeded', states: ['succeeded'] },
  { value: 'failed', label: 'Failed or dead-lettered', states: ['failed', 'dead'] },
  { value: 'cancelled', label: 'Cancelled', states: ['cancelled'] },
];

const TERMINAL: ReadonlySet<RunState> = new Set<RunState>(['succeeded', 'failed', 'cancelled']);

const RUN_PAGE = 200;
const KV_PAGE = 50;

const decoder = new TextDecoder();

/** Reads for one client and one set of app options; remembers runs that left the active listing. */
export class RunReads {
  /** Runs that left the active listing this session: listed as ended. */
  private readonly departed = new Map<string, RunRow>();

  constructor(
    private readonly client: InspectorClient,
    private readonly options: InspectorOptions,
    private readonly observer: RunObserver,
  ) {}

  describe(runId: string): Promise<RunDescription | undefined> {
    const fn = this.options.describeRun;
    return fn ? Promise.resolve(fn(runId)).catch(() => undefined) : Promise.resolve(undefined);
  }

  async runs(filter: string, shown: readonly RunRow[], selected: string | null): Promise<RunRow[]> {
    const chosen = FILTERS.find((f) => f.value === filter);
    const durable = chosen?.states?.length === 1 && ACTIVE.has(chosen.states[0]!) ? (chosen.states[0] as DurableRunState) : undefined;
    const ended = (chosen?.states ?? [...TERMINAL]).filter((s): s is TerminalStatus => TERMINAL.has(s));
    const [active, finished] = await Promise.all([
      allPages((cursor) => this.client.listRuns({ cursor, limit: RUN_PAGE, ...(durable ? { status: durable } : {}) })),
      ended.length === 0 ? [] : allPages((cursor) => this.client.listFinishedRuns({ cursor, limit: RUN_PAGE, status: ended })),
    ]);

    const known = new Set<string>([...((await this.options.knownRuns?.()) ?? []), ...this.observer.runIds(), ...this.departed.keys(), ...shown.map((r) => r.runId)]);
    if (selected) known.add(selected);
    for (const run of [...active, ...finished]) known.delete(run.runId);

    const activeRows = await Promise.all(
      active.map(async (run): Promise<RunRow> => ({ runId: run.runId, state: run.state ?? 'pending', currentStep: run.currentStep, submittedAtMs: run.submittedAtMs, endedAtMs: null, description: await this.describe(run.runId) })),
    );
    // The store's own record of how a run ended.
    const finishedRows = await Promise.all(
      finished.map(async (run): Promise<RunRow> => ({ runId: run.runId, state: run.status, currentStep: run.finalStep, submittedAtMs: run.submittedAtMs, endedAtMs: run.endedAtMs, description: await this.describe(run.runId) })),
    );
    // Filtered by state on the store side: the other known runs may still be active.
    const others = durable ? [] : await Promise.all([...known].map((runId) => this.inactive(runId, shown)));
    const rows = [...activeRows, ...finishedRows, ...others.filter((r): r is RunRow => r !== undefined)];
    for (const row of rows) if (!ACTIVE.has(row.state)) this.departed.set(row.runId, row);
    const keep = chosen?.states ? new Set(chosen.states) : null;
    const startedOf = (r: RunRow): number => r.submittedAtMs ?? r.description?.submittedAtMs ?? r.endedAtMs ?? 0;
    return rows.filter((r) => keep === null || keep.has(r.state)).sort((a, b) => startedOf(b) - startedOf(a));
  }

  /** A run missing from the active listing: ended (how, when known), or active after all (a race). */
  private async inactive(runId: string, shown: readonly RunRow[]): Promise<RunRow | undefined> {
    const description = await this.describe(runId);
    const seen = this.observer.ending(runId) ?? description?.ended;
    const submittedAtMs = description?.submittedAtMs ?? this.departed.get(runId)?.submittedAtMs ?? null;
    if (seen) return { runId, state: seen.status, currentStep: seen.finalStep ?? null, submittedAtMs, endedAtMs: seen.at ?? null, description };
    const view = await this.client.status(runId).catch(() => null);
    if (view === null) {
      const before = this.departed.get(runId) ?? shown.find((r) => r.runId === runId);
      return before || description
        ? { runId, state: before && !ACTIVE.has(before.state) ? before.state : 'ended', currentStep: before?.currentStep ?? null, submittedAtMs, endedAtMs: before?.endedAtMs ?? null, description }
        : undefined;
    }
    const state: RunState = view.state === 'waiting-for-signal' || view.state === 'scheduled' ? view.state : (view.state as RunState);
    return { runId, state, currentStep: view.currentStep, submittedAtMs, endedAtMs: null, description };
  }

  async detail(runId: string, shown: readonly RunRow[]): Promise<RunDetailView> {
    // One read gives the active record (getRun's) and what else the store kept: tries, the outcome.
    const [stored, description] = await Promise.all([this.client.runTimeline(runId), this.describe(runId)]);
    const details = stored.active;
    const row = shown.find((r) => r.runId === runId);
    const ending =
      details === null ? (this.observer.ending(runId) ?? description?.ended ?? storedEnding(stored) ?? (row && !ACTIVE.has(row.state) && row.state !== 'ended' ? { status: row.state as TerminalStatus, error: null } : undefined)) : undefined;
    const waitKey = details?.waitingFor?.type === 'signal' ? details.waitingFor.correlationKey : null;
    const keys = [...new Set([...(waitKey ? [waitKey] : []), ...(description?.signalKeys ?? [])])];
    const [memo, signals, kv] = await Promise.all([
      this.client.listMemo(runId, this.options.memoKeys ?? []),
      Promise.all(keys.map(async (key) => ({ key, buffered: await this.client.bufferedSignal(key), waiting: key === waitKey }))),
      this.kv(description?.kvPrefixes ?? []),
    ]);
    return { runId, details, stored, description, ending, memo, signals, kv };
  }

  private async kv(prefixes: readonly string[]): Promise<[string, Uint8Array][]> {
    const pages = await Promise.all(prefixes.map((prefix) => this.client.kvScan(prefix, { limit: KV_PAGE })));
    return pages.flatMap((page) => page.entries.map(([k, v]): [string, Uint8Array] => [decoder.decode(k), v]));
  }
}

/** Every row of a paged listing, up to `RUN_PAGE * 5` (the list shows the newest first, so it stays readable). */
async function allPages<T>(page: (cursor: Uint8Array | undefined) => Promise<{ readonly runs: readonly T[]; readonly nextCursor: Uint8Array | undefined }>): Promise<T[]> {
  const rows: T[] = [];
  let cursor: Uint8Array | undefined;
  do {
    const next = await page(cursor);
    rows.push(...next.runs);
    cursor = next.nextCursor;
  } while (cursor && rows.length < RUN_PAGE * 5);
  return rows;
}
