/**
 * The demo's own small IndexedDB database, next to (not inside) the runtime's store. The runtime
 * keeps the runs; this keeps what the demo shows about them beyond that:
 * - `runs`: the runs this browser started (topic, time), listed even after they ended;
 * - `attempts`: every attempt of every step, written by the worker that runs it as it starts and
 *   ends (so a reload, a crash or a closed tab leaves an attempt that never ended: an interruption);
 * - `model-calls`: one record per model call a step made, or served from the run's history (a
 *   memo hit), so the page can show that no completed call is made again after a crash;
 * - `settings`: which model the agent uses. An API key stays in this browser's storage only.
 * Both the page and whichever worker executes steps open it (same origin).
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { StoreKind } from './agent-state.js';

export type ModelSettings =
  | { readonly kind: 'simulated' }
  | { readonly kind: 'openai'; readonly endpoint: string; readonly model: string; readonly apiKey: string };

export interface ModelCallRecord {
  readonly store: StoreKind;
  readonly runId: string;
  /** The step's name (`research 1`, `draft`). */
  readonly step: string;
  /** The answer came from the run's history: the call had completed in an earlier execution. */
  readonly memoHit: boolean;
  readonly at: number;
}

/** One attempt of one step, as the worker running it logged it. */
export interface AttemptRecord {
  readonly store: StoreKind;
  readonly runId: string;
  readonly step: string;
  /** The worker (host id) that ran it: an attempt left open by another worker than the leader was cut off. */
  readonly host: string;
  /** `ctx.step`'s attempt number within its execution (a replay after a reload starts again at 1). */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly startedAt: number;
  /** Last sign of life while it ran (how long an interrupted attempt ran at least). */
  readonly lastSeenAt: number;
  readonly endedAt: number | null;
  /** Null while running, and for an attempt cut off by a reload, crash or closed tab. */
  readonly outcome: 'completed' | 'failed' | 'cancelled' | null;
  readonly error: string | null;
  /** What the step produced, for a completed attempt. */
  readonly output: string | null;
  /** For a failed attempt with attempts left: the backoff before the next one. */
  readonly retryInMs: number | null;
}

/** A run this browser started. */
export interface RunRecord {
  readonly store: StoreKind;
  readonly runId: string;
  readonly topic: string;
  readonly createdAt: number;
  readonly researchCalls: number;
  readonly approvalTimeoutMs: number;
  /** The task simulates a model outage (Retry ends it). */
  readonly outage: boolean;
}

interface DemoSchema extends DBSchema {
  'model-calls': { key: number; value: ModelCallRecord; indexes: { byStore: StoreKind } };
  attempts: { key: number; value: AttemptRecord; indexes: { byRun: [StoreKind, string] } };
  runs: { key: [StoreKind, string]; value: RunRecord; indexes: { byStore: StoreKind } };
  settings: { key: string; value: ModelSettings };
}

let db: Promise<IDBPDatabase<DemoSchema>> | undefined;

function demoDb(): Promise<IDBPDatabase<DemoSchema>> {
  db ??= openDB<DemoSchema>('taquba-demo', 2, {
    upgrade(database, oldVersion) {
      // Version 1 logged model calls by step number (the StepRunner agent): start that log afresh.
      if (oldVersion >= 1) database.deleteObjectStore('model-calls');
      const calls = database.createObjectStore('model-calls', { autoIncrement: true });
      calls.createIndex('byStore', 'store');
      database.createObjectStore('attempts', { autoIncrement: true }).createIndex('byRun', ['store', 'runId']);
      database.createObjectStore('runs', { keyPath: ['store', 'runId'] }).createIndex('byStore', 'store');
      if (oldVersion < 1) database.createObjectStore('settings');
    },
    // Another tab still has version 1 open: it closes, reloads and opens version 2.
    blocking() {
      void db?.then((open) => open.close());
      db = undefined;
    },
  });
  return db;
}

export async function recordModelCall(record: ModelCallRecord): Promise<void> {
  await (await demoDb()).add('model-calls', record);
}

export async function modelCalls(store: StoreKind): Promise<ModelCallRecord[]> {
  return (await demoDb()).getAllFromIndex('model-calls', 'byStore', store);
}

/** Real calls, memo hits, and real calls of a step whose call had already completed once. */
export interface ModelCallSummary {
  readonly calls: number;
  readonly memoHits: number;
  readonly repeated: number;
}

export function summarize(records: readonly ModelCallRecord[], runId?: string): ModelCallSummary {
  const seen = new Set<string>();
  let calls = 0;
  let memoHits = 0;
  let repeated = 0;
  for (const r of records) {
    if (runId !== undefined && r.runId !== runId) continue;
    if (r.memoHit) {
      memoHits++;
      continue;
    }
    calls++;
    const step = `${r.runId}/${r.step}`;
    if (seen.has(step)) repeated++;
    seen.add(step);
  }
  return { calls, memoHits, repeated };
}

/** Logs an attempt as it starts; the returned function records what happened to it since. */
export async function startAttempt(record: AttemptRecord): Promise<(update: Partial<AttemptRecord>) => Promise<void>> {
  const database = await demoDb();
  const key = await database.add('attempts', record);
  let current = record;
  return async (update) => {
    current = { ...current, ...update };
    await database.put('attempts', current, key);
  };
}

export async function attemptsOf(store: StoreKind, runId: string): Promise<AttemptRecord[]> {
  return (await demoDb()).getAllFromIndex('attempts', 'byRun', [store, runId]);
}

export async function recordRun(record: RunRecord): Promise<void> {
  await (await demoDb()).put('runs', record);
}

export async function runsOf(store: StoreKind): Promise<RunRecord[]> {
  return (await demoDb()).getAllFromIndex('runs', 'byStore', store);
}

export async function loadModelSettings(): Promise<ModelSettings> {
  return (await (await demoDb()).get('settings', 'model')) ?? { kind: 'simulated' };
}

export async function saveModelSettings(settings: ModelSettings): Promise<void> {
  await (await demoDb()).put('settings', settings, 'model');
}
