/**
 * Model-based fencing test: 2-3 writers on one store, opened at random moments, commit their own
 * keys (and a few shared ones) in durable and non-durable commits while every store put and
 * delete is held and released in an order fast-check chooses (`fc.scheduler`), and protocol
 * steps fail on request. After each schedule everything is drained and closed, and a fresh open
 * must show every acknowledged write, no FENCED-rejected write, whole commits only, and the same
 * state again after whenIdle and a second reopen.
 *
 * Shared by the memory run (test/core/kv/fencing-model.test.ts) and the filesystem run
 * (test/node/kv-fencing-model-fs.test.ts).
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { fromUtf8 } from '../../../src/core/bytes.js';
import { KvDb } from '../../../src/core/kv/index.js';
import type { AppendLogStore, GetOptions, ListOptions, ObjectInfo, ObjectStore, ObjectVersion, PutOptions, StoredObject } from '../../../src/core/objects/index.js';
import { SMALL, explain, outcome, put, within, type Outcome } from './fencing.suite.js';

const OPEN_FAULTS = ['open:bump-epoch', 'open:fence-wal'] as const;
const RUN_FAULTS = ['wal:put', 'flush:sst-put', 'flush:manifest-put', 'compact:manifest-put'] as const;

export type ModelAction =
  | { readonly type: 'open'; readonly writer: number; readonly fault: (typeof OPEN_FAULTS)[number] | null }
  | { readonly type: 'write'; readonly writer: number; readonly own: number | null; readonly shared: number | null; readonly durable: boolean; readonly pad: number }
  | { readonly type: 'fault'; readonly writer: number; readonly point: (typeof RUN_FAULTS)[number] }
  | { readonly type: 'run'; readonly steps: number }
  | { readonly type: 'sleep'; readonly ms: number }
  | { readonly type: 'idle'; readonly writer: number }
  | { readonly type: 'pause'; readonly writer: number }
  | { readonly type: 'resume'; readonly writer: number };

const writerArb = fc.integer({ min: 0, max: 2 });
export const modelActionArb: fc.Arbitrary<ModelAction> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ type: fc.constant('open' as const), writer: fc.integer({ min: 1, max: 2 }), fault: fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom(...OPEN_FAULTS) }) }) },
  {
    weight: 10,
    arbitrary: fc.record({
      type: fc.constant('write' as const),
      writer: writerArb,
      own: fc.option(fc.integer({ min: 0, max: 2 }), { freq: 2 }),
      shared: fc.option(fc.integer({ min: 0, max: 2 }), { freq: 3 }),
      durable: fc.boolean(),
      pad: fc.integer({ min: 0, max: 160 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('fault' as const), writer: writerArb, point: fc.constantFrom(...RUN_FAULTS) }) },
  { weight: 6, arbitrary: fc.record({ type: fc.constant('run' as const), steps: fc.integer({ min: 1, max: 12 }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('sleep' as const), ms: fc.integer({ min: 0, max: 6 }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('idle' as const), writer: writerArb }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('pause' as const), writer: writerArb }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('resume' as const), writer: writerArb }) },
);

/**
 * One writer's view of the store. Every put (before it acts, and again before its answer
 * returns) and every delete waits for the scheduler to release it, so puts land and answer in an
 * order fast-check picks. `pause()` freezes the writer like a stopped process: every call it
 * makes (gets and lists too) waits until `resume()`, including a put already released by the
 * scheduler, whose answer then arrives late. `live = false` lets later calls through
 * unscheduled (the drain at the end of a schedule).
 */
class ScheduledStore implements ObjectStore {
  live = true;
  private paused: { promise: Promise<void>; resume: () => void } | undefined;
  readonly deleteMany?: (keys: readonly string[]) => Promise<void>;
  /** The inner store's append logs, with every append (and its answer) and seal check scheduled too. */
  readonly appendLogs?: AppendLogStore;

  constructor(
    readonly inner: ObjectStore,
    private readonly scheduler: fc.Scheduler,
    private readonly name: string,
  ) {
    const batch = inner.deleteMany?.bind(inner);
    if (batch) {
      this.deleteMany = async (keys) => {
        await this.gate(`deleteMany ${keys.join(',')}`);
        return batch(keys);
      };
    }
    const logs = inner.appendLogs;
    if (logs) {
      this.appendLogs = {
        createLog: async (key) => {
          await this.gate(`create log ${key}`);
          const log = await logs.createLog(key);
          const gate = (label: string): Promise<void> => this.gate(label);
          return {
            key,
            get size() {
              return log.size;
            },
            async append(data) {
              await gate(`append ${key}`);
              let error: unknown;
              await log.append(data).catch((e: unknown) => (error = e));
              await gate(`answer of append ${key}: ${error === undefined ? 'ok' : String(error)}`);
              if (error !== undefined) throw error;
            },
            close: () => log.close(),
          };
        },
        exists: async (key) => {
          await this.gate(`exists ${key}`);
          return logs.exists(key);
        },
      };
    }
  }

  get isPaused(): boolean {
    return this.paused !== undefined;
  }

  pause(): void {
    if (this.paused) return;
    let resume!: () => void;
    const promise = new Promise<void>((r) => (resume = r));
    this.paused = { promise, resume };
  }

  resume(): void {
    const paused = this.paused;
    this.paused = undefined;
    paused?.resume();
  }

  private async whileActive(): Promise<void> {
    while (this.paused) await this.paused.promise;
  }

  private async gate(label: string): Promise<void> {
    if (this.live) await this.scheduler.schedule(Promise.resolve(), `${this.name}: ${label}`);
    await this.whileActive();
  }

  async get(key: string, options?: GetOptions): Promise<StoredObject | undefined> {
    await this.whileActive();
    return this.inner.get(key, options);
  }

  async put(key: string, data: Uint8Array, options?: PutOptions): Promise<{ version: ObjectVersion }> {
    const how = options?.ifNoneMatch ? ' (create)' : options?.ifMatch ? ' (swap)' : '';
    await this.gate(`put ${key}${how}`);
    let result: { version: ObjectVersion } | undefined;
    let error: unknown;
    try {
      result = await this.inner.put(key, data, options);
    } catch (e) {
      error = e;
    }
    await this.gate(`answer of put ${key}${how}: ${error === undefined ? 'ok' : String((error as { code?: string }).code ?? error)}`);
    if (error !== undefined) throw error;
    return result!;
  }

  async delete(key: string): Promise<void> {
    await this.gate(`delete ${key}`);
    return this.inner.delete(key);
  }

  async *list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> {
    await this.whileActive();
    yield* this.inner.list(prefix, options);
  }
}

interface WriteRecord {
  readonly writer: number;
  readonly n: number;
  readonly unique: string;
  readonly own?: string;
  readonly shared?: string;
  readonly value: string;
  readonly durable: boolean;
  outcome?: Outcome;
  settled: Promise<void>;
}

interface WriterState {
  readonly id: number;
  readonly store: ScheduledStore;
  db?: KvDb;
  opening?: Promise<void>;
  openOutcome?: Outcome;
  /** Order in which opens succeeded (1 = first). */
  openRank?: number;
  openFault: boolean;
  /** A fault was injected into one of its steps: its failures may be anything. */
  faulted: boolean;
  readonly armed: Set<string>;
  stopped: boolean;
  next: number;
  readonly writes: WriteRecord[];
  readonly background: Promise<unknown>[];
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs one schedule on a store from `makeStore` and checks the contract. */
export async function runFencingModel(
  makeStore: () => Promise<{ store: ObjectStore; cleanup?: () => Promise<void> }>,
  scheduler: fc.Scheduler,
  actions: readonly ModelAction[],
  writerCount: number,
): Promise<void> {
  const { store: inner, cleanup } = await makeStore();
  const writers: WriterState[] = Array.from({ length: writerCount }, (_, id) => ({
    id,
    store: new ScheduledStore(inner, scheduler, `writer ${id}`),
    openFault: false,
    faulted: false,
    armed: new Set<string>(),
    stopped: false,
    next: 0,
    writes: [],
    background: [],
  }));
  let openRanks = 0;
  const dbs: KvDb[] = [];
  try {
    const open = (w: WriterState, fault: string | null): void => {
      if (w.opening) return;
      if (fault) w.armed.add(fault);
      w.openFault = fault !== null;
      const hook = (point: string): void => {
        if (!w.armed.delete(point)) return;
        w.faulted = true;
        throw new Error(`injected fault at ${point}`);
      };
      const opening = KvDb.open(w.store, { ...SMALL, faults: hook });
      w.opening = outcome(opening).then(async (o) => {
        w.openOutcome = o;
        if (o.ok) {
          w.db = await opening;
          dbs.push(w.db);
          w.openRank = ++openRanks;
        }
      });
    };
    // Writes are blind (`db.write`), which never conflict: any refusal stops the writer.
    const stop = (w: WriterState, o: Outcome): void => {
      if (!o.ok) w.stopped = true;
    };

    open(writers[0], null);
    for (const action of actions) {
      switch (action.type) {
        case 'open':
          if (action.writer < writerCount) open(writers[action.writer], action.fault);
          break;
        case 'write': {
          const w = writers[action.writer % writerCount];
          if (!w.opening || w.stopped || w.store.isPaused) break;
          // A writer still opening writes once it is open (store calls released meanwhile in
          // the scheduler's order, other writers' too).
          if (!w.openOutcome) await within(scheduler.waitFor(w.opening), 15_000, `writer ${w.id} opening`);
          if (!w.db || w.stopped) break;
          const n = w.next++;
          const value = `${w.id}.${n}.${'x'.repeat(action.pad)}`;
          const record: WriteRecord = {
            writer: w.id,
            n,
            unique: `u/${w.id}/${String(n).padStart(4, '0')}`,
            own: action.own === null ? undefined : `o/${w.id}/${action.own}`,
            shared: action.shared === null ? undefined : `s/${action.shared}`,
            value,
            durable: action.durable,
            settled: Promise.resolve(),
          };
          const ops = [record.unique, record.own, record.shared].filter((k): k is string => k !== undefined).map((k) => put(k, value));
          record.settled = outcome(w.db.write(ops, { durable: action.durable })).then((o) => {
            record.outcome = o;
            stop(w, o);
          });
          w.writes.push(record);
          break;
        }
        case 'fault': {
          const w = writers[action.writer % writerCount];
          if (w.opening && !w.stopped) w.armed.add(action.point);
          break;
        }
        case 'run':
          for (let i = 0; i < action.steps && scheduler.count() > 0; i++) await scheduler.waitNext(1);
          break;
        case 'sleep':
          // Real time is the subject: 0-6 ms lets the writers' background timers (flushes, retries) interleave.
          await sleep(action.ms);
          break;
        case 'pause':
          writers[action.writer % writerCount].store.pause();
          break;
        case 'resume':
          writers[action.writer % writerCount].store.resume();
          break;
        case 'idle': {
          const w = writers[action.writer % writerCount];
          if (w.db && !w.stopped) w.background.push(w.db.whenIdle().catch(() => undefined));
          break;
        }
      }
    }

    // Drain: let every held call through (in the scheduler's order), then nothing is held any more.
    const everything = (): Promise<unknown> =>
      Promise.all(writers.flatMap((w) => [w.opening, ...w.writes.map((r) => r.settled), ...w.background]));
    await within(
      (async () => {
        for (const w of writers) w.store.resume();
        while (scheduler.count() > 0) await scheduler.waitNext(1);
        for (const w of writers) w.store.live = false;
        await scheduler.waitIdle();
        await everything();
      })(),
      15_000,
      'every open and write settling once all held store calls are released',
    );

    // Opens: succeed, or FENCED, or the injected fault.
    for (const w of writers) {
      if (!w.openOutcome || w.openOutcome.ok || w.faulted) continue;
      expect(explain(w.openOutcome), `writer ${w.id}'s open fails only with FENCED`).toBe('FENCED');
    }

    for (const w of writers) {
      const rejections = w.writes.filter((r) => r.outcome && !r.outcome.ok);
      const firstFenced = w.writes.find((r) => r.outcome && !r.outcome.ok && r.outcome.code === 'FENCED');
      // Without an injected fault the only reason to refuse a write is a newer writer.
      if (!w.faulted) {
        for (const r of rejections) {
          expect(explain(r.outcome!), `writer ${w.id}'s write ${r.n} (no fault injected into it)`).toBe('FENCED');
        }
      }
      if (firstFenced) {
        // Commits are stored in order: nothing after a FENCED commit can have been stored.
        for (const r of w.writes) {
          if (r.n > firstFenced.n && r.durable) expect(r.outcome?.ok, `writer ${w.id}'s durable write ${r.n} after its FENCED write ${firstFenced.n}`).toBe(false);
        }
        // And a fenced writer stays fenced.
        const again = await within(outcome(w.db!.write([put(`late/${w.id}`, 'late')])), 10_000, 'a write of a fenced writer');
        expect(explain(again), `writer ${w.id}'s write after FENCED`).toBe('FENCED');
      }
    }

    await within(Promise.all(dbs.map((db) => db.close().catch(() => undefined))), 15_000, 'closing every writer');

    const state = await readAll(inner);
    checkState(writers, state);
    expect([...state.keys()].filter((k) => k.startsWith('late/')), 'writes of fenced writers').toEqual([]);
    // whenIdle (flush, compaction, GC) and a second reopen change nothing.
    const again = await readAll(inner, true);
    expect(again, 'state after whenIdle and another reopen').toEqual(state);
  } finally {
    for (const w of writers) {
      w.store.live = false;
      w.store.resume();
    }
    while (scheduler.count() > 0) await scheduler.waitNext(1).catch(() => undefined);
    await Promise.all(dbs.map((db) => db.close().catch(() => undefined)));
    await cleanup?.();
  }
}

/** A fresh open's full scan (it must open: no CORRUPT_DATA); with `idle`, after whenIdle. */
async function readAll(store: ObjectStore, idle = false): Promise<Map<string, string>> {
  const opening = KvDb.open(store, SMALL);
  const opened = await within(outcome(opening), 15_000, 'the reopen after the schedule');
  expect(explain(opened), 'the store reopens after the schedule').toBe('acknowledged');
  const db = await opening;
  try {
    if (idle) await within(db.whenIdle(), 15_000, 'whenIdle after reopen');
    const out = new Map<string, string>();
    for await (const e of db.scan()) out.set(fromUtf8(e.key), fromUtf8(e.value));
    return out;
  } finally {
    await db.close();
  }
}

function checkState(writers: readonly WriterState[], state: ReadonlyMap<string, string>): void {
  const records = new Map<string, WriteRecord>();
  for (const w of writers) for (const r of w.writes) records.set(r.value, r);
  /** Rejected with a code that promises the commit was not applied. */
  const fenced = (r: WriteRecord): boolean => r.outcome !== undefined && !r.outcome.ok && r.outcome.code === 'FENCED';
  /** Acknowledged as durable: itself, or a later durable commit of the same writer was. */
  const acked = new Set<WriteRecord>();
  for (const w of writers) {
    let durableAckFrom = -1;
    for (const r of w.writes) if (r.durable && r.outcome?.ok) durableAckFrom = Math.max(durableAckFrom, r.n);
    for (const r of w.writes) if (r.n <= durableAckFrom && (r.outcome?.ok || r.outcome === undefined)) acked.add(r);
  }
  const writerOf = (id: number): WriterState => writers[id];

  for (const [key, value] of state) {
    const r = records.get(value);
    expect(r, `key ${key} holds a value somebody wrote (${value.slice(0, 20)})`).toBeDefined();
    expect(fenced(r!), `key ${key} holds the value of write ${r!.writer}.${r!.n}, rejected with ${r!.outcome && explain(r!.outcome)}`).toBe(false);
    expect(state.get(r!.unique), `commit ${r!.writer}.${r!.n} is whole (seen at ${key})`).toBe(value);
  }
  for (const w of writers) {
    for (const r of w.writes) {
      if (acked.has(r)) expect(state.get(r.unique), `acknowledged write ${r.writer}.${r.n} (${r.durable ? 'durable' : 'non-durable, acknowledged by a later durable commit'})`).toBe(r.value);
      if (fenced(r)) expect(state.get(r.unique), `write ${r.writer}.${r.n} rejected with ${explain(r.outcome!)} was not applied`).toBeUndefined();
    }
  }
  // Keys with an acknowledged write hold that write or a later one: same writer, later commit;
  // or a writer whose open succeeded after the acknowledging writer's.
  const keys = new Set<string>();
  for (const w of writers) for (const r of w.writes) for (const k of [r.own, r.shared]) if (k) keys.add(k);
  for (const key of keys) {
    const ackedHere = [...acked].filter((r) => r.own === key || r.shared === key);
    if (ackedHere.length === 0) continue;
    const value = state.get(key);
    expect(value, `key ${key} has acknowledged writes (${ackedHere.map((r) => `${r.writer}.${r.n}`).join(', ')})`).toBeDefined();
    const holder = records.get(value!)!;
    for (const r of ackedHere) {
      const later =
        holder.writer === r.writer ? holder.n >= r.n : (writerOf(holder.writer).openRank ?? 0) > (writerOf(r.writer).openRank ?? Number.POSITIVE_INFINITY);
      expect(later, `key ${key} holds ${holder.writer}.${holder.n}, older than acknowledged ${r.writer}.${r.n}`).toBe(true);
    }
  }
}

/**
 * fast-check parameters: FC_SEED (and FC_PATH) from a failure message reproduce it. Runs and
 * shrinking stop after `timeLimitMs`; a failure found by then is still reported (shrunk so far).
 */
export function modelParameters(numRuns: number, timeLimitMs: number): fc.Parameters<unknown> {
  const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
  return { numRuns, interruptAfterTimeLimit: timeLimitMs, ...(seed === undefined ? {} : { seed, path: process.env.FC_PATH }) };
}
