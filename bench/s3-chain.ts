/**
 * s3.chain: the `workflow.chain` workload (see workflow-chain.ts) over S3ObjectStore on the local
 * S3 test server (test/setup/s3-server.ts; or the real endpoint configured in the environment,
 * see test/setup/s3-target.ts), store `s3`. The harness has no `s3` store factory, so this file
 * opens its own target and gives every phase a store on a fresh prefix.
 *
 *   steps_per_s       steps completed per second (worker phase); one durable ack per step
 *   raw_puts_per_s    sequential unconditional PutObjects of 100 bytes per second, same run
 *                     (`measureRawPuts`): the baseline one PUT per commit could not beat
 *   commits_per_put   average durable commits carried by one WAL PUT (keys under `kv/wal/`)
 *                     with 64 concurrent writers each looping a single-key KvDb transaction
 *
 * Fields: `steps_per_s` carries the object requests per step of the worker phase (`puts_per_step`,
 * `gets_per_step`, `lists_per_step`, `deletes_per_step` (DELETE and DeleteObjects requests) and
 * `deleted_objects_per_step`; the emulator's one process applies every
 * request, so these bound the chain); `raw_puts_per_s` carries `concurrent_16_puts_per_s` (16 putters at
 * once: the server's request throughput, for reference only).
 *
 * Fewer runs than the fs chain (every request crosses HTTP to an emulator on the same 2 cores),
 * so the whole benchmark stays under about a minute. The chain itself is chain-workload.ts.
 */
import { KvDb } from '../src/core/kv/index.js';
import { CountingObjectStore } from '../src/testing/counting-store.js';
import type { ObjectStore, ObjectVersion, PutOptions } from '../src/core/objects/object-store.js';
import { Queue } from '../src/core/queue/index.js';
import { CONCURRENCY, PAYLOAD_BYTES, STEPS, countAcks, quiet, runChain } from './chain-workload.js';
import { spawn } from 'node:child_process';
import { S3ObjectStore } from '../src/stores/s3/index.js';
import { S3_EXTERNAL, TEST_RETRY, measureRawPuts, openS3Target } from '../test/setup/s3-target.js';
import { durationMs, log, now, runFor, type BenchContext, type Benchmark } from './harness.js';

const RUNS = 1000;
const WARMUP_RUNS = 300;
const RAW_PUTS = 300;
const WRITERS = 64;
const KV_PATH = 'kv';
const enc = new TextEncoder();




/** CountingObjectStore that also counts the puts of WAL objects (keys under `<path>/wal/`). */
class WalCountingStore extends CountingObjectStore {
  walPuts = 0;
  walPutFailures = 0;
  constructor(
    inner: ObjectStore,
    private readonly walPrefix: string,
  ) {
    super(inner);
  }
  override async put(key: string, data: Uint8Array, options?: PutOptions): Promise<{ version: ObjectVersion }> {
    if (!key.startsWith(this.walPrefix)) return super.put(key, data, options);
    this.walPuts++;
    try {
      return await super.put(key, data, options);
    } catch (e) {
      this.walPutFailures++;
      throw e;
    }
  }
}

export interface BenchTarget {
  readonly where: string;
  /** The local test server's address (child-process mode only), for benchmarks that start their own processes. */
  readonly server?: { readonly endpoint: string; readonly bucket: string; readonly region: string };
  newStore(): S3ObjectStore;
  close(): Promise<void>;
}

/**
 * The local test server in a child process (default), as a real endpoint would be: the emulator's
 * CPU then runs beside the engine instead of on its event loop. BENCH_S3_INPROC=1 runs it in this
 * process instead; with TAQUBA_S3_BUCKET set, the configured real endpoint is used.
 */
export async function openBenchTarget(): Promise<BenchTarget> {
  if (S3_EXTERNAL || process.env.BENCH_S3_INPROC === '1') {
    const t = await openS3Target();
    return { where: S3_EXTERNAL ? 'external' : 'in-process', newStore: () => t.newStore(), close: () => t.close() };
  }
  const serverModule = new URL('../test/setup/s3-server.ts', import.meta.url).href;
  const code = [
    `const { startS3TestServer } = await import(${JSON.stringify(serverModule)});`,
    'const s = await startS3TestServer();',
    "process.stdout.write(JSON.stringify({ endpoint: s.endpoint, bucket: s.bucket, region: s.region, credentials: s.credentials }) + '\\n');",
    "process.stdin.on('end', () => void s.stop().then(() => process.exit(0)));",
    'process.stdin.resume();',
  ].join('\n');
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['pipe', 'pipe', 'ignore'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const info = await new Promise<{ endpoint: string; bucket: string; region: string; credentials: { accessKeyId: string; secretAccessKey: string } }>((resolve, reject) => {
    let buf = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(buf.slice(0, nl)));
    });
    child.once('exit', (c) => reject(new Error(`s3 test server exited with ${c}`)));
  });
  const stores: S3ObjectStore[] = [];
  let n = 0;
  return {
    where: 'child process',
    server: { endpoint: info.endpoint, bucket: info.bucket, region: info.region },
    newStore() {
      const store = new S3ObjectStore({
        bucket: info.bucket,
        prefix: `bench/s${n++}/`,
        clientConfig: { region: info.region, endpoint: info.endpoint, forcePathStyle: true, credentials: info.credentials },
        retry: TEST_RETRY,
        requestTimeoutMs: 10_000,
      });
      stores.push(store);
      return store;
    },
    async close() {
      for (const store of stores) store.destroy();
      child.stdin!.end();
      await exited;
    },
  };
}

async function commitsPerPut(target: BenchTarget, ms: number) {
  const store = new WalCountingStore(target.newStore(), `${KV_PATH}/wal/`);
  const db = await KvDb.open(store, { path: KV_PATH });
  const v = new Uint8Array(PAYLOAD_BYTES).fill(9);
  const key = (tag: string, w: number, i: number) => enc.encode(`${tag}${String(w).padStart(3, '0')}${String(i).padStart(9, '0')}`);
  try {
    await runFor(300, WRITERS, (w, i) => db.transaction((t) => t.put(key('warm', w, i), v))); // warm-up
    store.walPuts = 0;
    store.walPutFailures = 0;
    store.reset();
    const r = await runFor(ms, WRITERS, (w, i) => db.transaction((t) => t.put(key('meas', w, i), v)));
    const walPuts = store.walPuts - store.walPutFailures;
    return { commits: r.ops, walPuts, ms: r.ms, commitsPerSecond: r.perSecond, allPuts: store.snapshot().put.calls };
  } finally {
    await db.close();
  }
}

async function run(ctx: BenchContext): Promise<void> {
  const target = await openBenchTarget();
  try {
    let submitMs = 0;
    let workMs = 0;
    // Counted, to report the object requests per step next to the rates.
    const store = new CountingObjectStore(target.newStore());
    let ops = store.snapshot();
    const queue = await Queue.open(store, 'bench', { logger: quiet });
    try {
      const acks = countAcks(queue);
      await runChain(queue, acks, store, WARMUP_RUNS, 'warm'); // JIT warm-up, not reported
      ({ submitMs, workMs } = await runChain(queue, acks, store, RUNS, 'run', () => store.reset()));
      ops = store.snapshot();
    } finally {
      await queue.close();
    }
    const rawStore = target.newStore();
    await measureRawPuts(rawStore, { count: 20, bytes: PAYLOAD_BYTES }); // warm-up
    const raw = await measureRawPuts(rawStore, { count: RAW_PUTS, bytes: PAYLOAD_BYTES });
    // For reference only: 16 concurrent putters (the server's request throughput, not a baseline).
    const rawPayload = new Uint8Array(PAYLOAD_BYTES).fill(7);
    const raw16 = await runFor(1000, 16, (w, i) => rawStore.put(`bench16/${w}-${i % 4}`, rawPayload));
    const group = await commitsPerPut(target, Math.min(durationMs(), 3000));

    const fields = { runs: RUNS, steps_per_run: STEPS, payload_bytes: PAYLOAD_BYTES, concurrency: CONCURRENCY, duration_ms: Math.round(workMs) };
    const stepsPerS = (RUNS * STEPS * 1000) / workMs;
    const perStep = (n: number) => Math.round((n / (RUNS * STEPS)) * 1000) / 1000;
    const commitsPerPutValue = group.commits / Math.max(1, group.walPuts);
    ctx.emit('steps_per_s', stepsPerS, 'steps/s', { ...fields, server: target.where, submit_per_s: Math.round((RUNS * 1000) / submitMs), ratio_to_raw_puts: Math.round((stepsPerS / raw.putsPerSecond) * 100) / 100,
      // Object requests per step in the worker phase (the emulator serves one request at a time).
      puts_per_step: perStep(ops.put.calls),
      gets_per_step: perStep(ops.get.calls + ops.rangedGet.calls),
      lists_per_step: perStep(ops.list.calls),
      // Delete requests: single DELETEs plus DeleteObjects batches (the engine batches on S3).
      deletes_per_step: perStep(ops.delete.calls + ops.deleteMany.calls),
      deleted_objects_per_step: perStep(ops.delete.calls + ops.deleteMany.objects),
    });
    ctx.emit('raw_puts_per_s', raw.putsPerSecond, 'ops/s', { value_bytes: PAYLOAD_BYTES, server: target.where, concurrent_16_puts_per_s: Math.round(raw16.perSecond), ops: raw.count, duration_ms: Math.round(raw.ms) });
    ctx.emit('commits_per_put', commitsPerPutValue, 'commits/put', {
      writers: WRITERS,
      server: target.where,
      commits: group.commits,
      wal_puts: group.walPuts,
      all_puts: group.allPuts,
      commits_per_s: Math.round(group.commitsPerSecond),
      duration_ms: Math.round(group.ms),
    });
    log(
      `  chain ${stepsPerS.toFixed(0)} steps/s in ${workMs.toFixed(0)} ms (${(stepsPerS / raw.putsPerSecond).toFixed(1)}x raw); raw puts ${raw.putsPerSecond.toFixed(0)}/s; ` +
        `${group.commits} commits in ${group.walPuts} WAL puts = ${commitsPerPutValue.toFixed(1)} commits/put`,
    );
  } finally {
    await target.close();
  }
}

const benchmarks: Benchmark[] = [{ name: 's3.chain', stores: ['s3'], run }];
export default benchmarks;
