/**
 * The demo's own small IndexedDB database, next to (not inside) the runtime's store:
 * - `model-calls`: one record per model call a step really made (or served from its memo), so
 *   the page can show how many real calls happened and that none was repeated after a crash;
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
  readonly stepNumber: number;
  readonly memoHit: boolean;
  readonly at: number;
}

interface DemoSchema extends DBSchema {
  'model-calls': { key: number; value: ModelCallRecord; indexes: { byStore: StoreKind } };
  settings: { key: string; value: ModelSettings };
}

let db: Promise<IDBPDatabase<DemoSchema>> | undefined;

function demoDb(): Promise<IDBPDatabase<DemoSchema>> {
  db ??= openDB<DemoSchema>('taquba-demo', 1, {
    upgrade(database) {
      const calls = database.createObjectStore('model-calls', { autoIncrement: true });
      calls.createIndex('byStore', 'store');
      database.createObjectStore('settings');
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
    const step = `${r.runId}/${r.stepNumber}`;
    if (seen.has(step)) repeated++;
    seen.add(step);
  }
  return { calls, memoHits, repeated };
}

export async function loadModelSettings(): Promise<ModelSettings> {
  return (await (await demoDb()).get('settings', 'model')) ?? { kind: 'simulated' };
}

export async function saveModelSettings(settings: ModelSettings): Promise<void> {
  await (await demoDb()).put('settings', settings, 'model');
}
