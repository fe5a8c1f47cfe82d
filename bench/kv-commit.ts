/**
 * kv.commit: durable single-key commits per second (group commit) against the store's own
 * durable single puts per second, measured in the same run.
 *
 *   raw_puts_per_s          sequential `store.put` of 100-byte objects under fresh keys
 *   raw_create_puts_per_s   the same with `ifNoneMatch: '*'` (what a WAL put is)
 *   raw_append_sync_per_s   sequential appends of 100 bytes to one open append log, each durable
 *                           (`write` + `fdatasync` on fs): the physical floor of a commit on a
 *                           store with append logs (only those; see docs/rfcs/0002-wal-append-log.md)
 *   commits_over_raw_append commits_per_s_1 / raw_append_sync_per_s
 *   commits_per_s_1         1 writer looping `await db.transaction(t => t.put(k, v))`
 *   commits_per_s_64        64 such writers at once
 *   ratio_64                commits_per_s_64 / raw_puts_per_s
 *
 * The four loops run in alternation (ROUNDS rounds of duration/ROUNDS each), so that load from
 * other processes on a shared machine skews them alike. Fields: p50_ms / p99_ms per operation.
 */
import { KvDb } from '../src/core/kv/index.js';
import type { ObjectStore } from '../src/core/objects/object-store.js';
import type { AppendLog } from '../src/core/objects/append-log.js';
import { durationMs, log as say, percentile, runFor, type BenchContext, type Benchmark } from './harness.js';

const VALUE_BYTES = 100;
const enc = new TextEncoder();

function value(seed: number): Uint8Array {
  const v = new Uint8Array(VALUE_BYTES);
  for (let i = 0; i < VALUE_BYTES; i++) v[i] = (seed * 31 + i * 7) & 0xff;
  return v;
}

/** Rounds per measurement: the four loops alternate so that load from elsewhere hits them alike. */
const ROUNDS = 3;

interface Tally {
  ops: number;
  ms: number;
  latencies: number[];
}

function add(t: Tally, r: { ops: number; ms: number; latencies: number[] }): void {
  t.ops += r.ops;
  t.ms += r.ms;
  for (const l of r.latencies) t.latencies.push(l);
}

const rate = (t: Tally) => (t.ops * 1000) / t.ms;

function fields(t: Tally) {
  return {
    value_bytes: VALUE_BYTES,
    ops: t.ops,
    duration_ms: Math.round(t.ms),
    rounds: ROUNDS,
    p50_ms: percentile(t.latencies, 50),
    p99_ms: percentile(t.latencies, 99),
  };
}

function rawPuts(store: ObjectStore, ms: number, createOnly: boolean, prefix: string) {
  const v = value(1);
  return runFor(ms, 1, (_w, i) => store.put(`${prefix}/${String(i).padStart(12, '0')}`, v, createOnly ? { ifNoneMatch: '*' } : undefined));
}

function rawAppends(log: AppendLog, ms: number) {
  const v = value(3);
  return runFor(ms, 1, () => log.append(v));
}

function commits(db: KvDb, ms: number, writers: number, tag: string) {
  const v = value(2);
  // 16-byte keys: tag (4) + writer (3) + counter (9).
  const key = (w: number, i: number) => enc.encode(`${tag}${String(w).padStart(3, '0')}${String(i).padStart(9, '0')}`);
  return runFor(ms, writers, (w, i) => db.transaction((t) => t.put(key(w, i), v)));
}

async function run(ctx: BenchContext): Promise<void> {
  const slice = durationMs() / ROUNDS;
  const raw = await ctx.freshStore('raw');
  const handle = await ctx.freshStore('db');
  const db = await KvDb.open(handle.store);
  const plain: Tally = { ops: 0, ms: 0, latencies: [] };
  const create: Tally = { ops: 0, ms: 0, latencies: [] };
  const one: Tally = { ops: 0, ms: 0, latencies: [] };
  const many: Tally = { ops: 0, ms: 0, latencies: [] };
  const appends: Tally = { ops: 0, ms: 0, latencies: [] };
  const log = await raw.store.appendLogs?.createLog('append/log');
  try {
    // Warm-up (JIT, directory creation), not measured.
    await rawPuts(raw.store, 100, false, 'warm');
    await commits(db, 200, 4, 'warm');
    for (let r = 0; r < ROUNDS; r++) {
      add(plain, await rawPuts(raw.store, slice, false, `raw${r}`));
      add(create, await rawPuts(raw.store, slice, true, `create${r}`));
      if (log) add(appends, await rawAppends(log, slice));
      add(one, await commits(db, slice, 1, `a${r}`.padEnd(4, '_')));
      add(many, await commits(db, slice, 64, `b${r}`.padEnd(4, '_')));
    }
  } finally {
    await log?.close();
    await db.close();
    await handle.dispose();
    await raw.dispose();
  }
  ctx.emit('raw_puts_per_s', rate(plain), 'ops/s', fields(plain));
  ctx.emit('raw_create_puts_per_s', rate(create), 'ops/s', fields(create));
  if (log) ctx.emit('raw_append_sync_per_s', rate(appends), 'ops/s', fields(appends));
  ctx.emit('commits_per_s_1', rate(one), 'ops/s', { writers: 1, ...fields(one) });
  if (log) ctx.emit('commits_over_raw_append', rate(one) / rate(appends), 'x', { writers: 1, target: 0.5 });
  ctx.emit('commits_per_s_64', rate(many), 'ops/s', { writers: 64, ...fields(many) });
  ctx.emit('ratio_64', rate(many) / rate(plain), 'x', { writers: 64, ratio_to_create_puts: rate(many) / rate(create) });
  say(`  raw ${rate(plain).toFixed(0)}/s, create-only ${rate(create).toFixed(0)}/s${log ? `, append+sync ${rate(appends).toFixed(0)}/s` : ''}, 1 writer ${rate(one).toFixed(0)}/s, 64 writers ${rate(many).toFixed(0)}/s`);
}

const benchmarks: Benchmark[] = [{ name: 'kv.commit', stores: ['memory', 'fs'], run }];
export default benchmarks;
