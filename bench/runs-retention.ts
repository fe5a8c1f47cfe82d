/**
 * runs.retention: what keeping finished runs readable costs (issue 25). RUNS one-step runs end
 * (each succeeding with a RESULT_BYTES result, 26-character run ids, no headers), then:
 *
 *   bytes_per_finished_run   caller-KV bytes (keys + values) the finished-run records and their
 *                            retention index hold, per run
 *   sweep_runs_per_s         how fast one sweep deletes them all once they are past the window
 *   command_bytes            caller-KV bytes of one kept command answer (a submit with a command id)
 */
import { utf8 } from '../src/core/bytes.js';
import { MockClock } from '../src/core/clock.js';
import { Queue } from '../src/core/queue/index.js';
import { NoopTerminalHook, StepOutcome, WorkflowRuntime } from '../src/core/workflow/index.js';
import { now, type BenchContext, type Benchmark } from './harness.js';

const RUNS = 2000;
const RESULT_BYTES = 10;
const RETENTION_MS = 60_000;
const quiet = { warn: () => undefined };

/** Keys and values under `prefix`, in bytes. */
async function kvBytes(queue: Queue, prefix: string): Promise<{ bytes: number; entries: number }> {
  let bytes = 0;
  let entries = 0;
  let cursor: Uint8Array | undefined;
  do {
    const page = await queue.kvScan(utf8(prefix), { cursor, limit: 1000 });
    for (const [k, v] of page.entries) {
      bytes += k.length + v.length;
      entries++;
    }
    cursor = page.nextCursor;
  } while (cursor);
  return { bytes, entries };
}

async function run(ctx: BenchContext): Promise<void> {
  const handle = await ctx.freshStore('retention');
  const clock = new MockClock(1_700_000_000_000);
  const queue = await Queue.open(handle.store, 'bench', { logger: quiet, clock });
  try {
    const result = new Uint8Array(RESULT_BYTES).fill(7);
    let ended = 0;
    const runtime = new WorkflowRuntime(queue, handle.store, async () => StepOutcome.succeed(result), new NoopTerminalHook(), {
      logger: quiet,
      outcomeRetentionMs: RETENTION_MS,
      commandPollMs: null,
    });
    const worker = runtime.spawn();
    const ids = Array.from({ length: RUNS }, (_, i) => `run-${String(i).padStart(22, '0')}`);
    for (let i = 0; i < ids.length; i += 100) await Promise.all(ids.slice(i, i + 100).map((runId) => runtime.submit({ runId })));
    while (ended < RUNS) {
      ended = (await kvBytes(queue, 'workflow/outcomes/')).entries;
      if (ended < RUNS) await new Promise((r) => setTimeout(r, 20));
    }
    await worker.shutdown();
    const records = await kvBytes(queue, 'workflow/outcomes/');
    const index = await kvBytes(queue, 'workflow/ended/');
    ctx.emit('bytes_per_finished_run', (records.bytes + index.bytes) / RUNS, 'B', { runs: RUNS, result_bytes: RESULT_BYTES, record_bytes: records.bytes / RUNS, index_bytes: index.bytes / RUNS });

    await clock.advance(RETENTION_MS + 1);
    const t0 = now();
    const swept = await runtime.sweepFinishedRunsNow();
    const ms = now() - t0;
    ctx.emit('sweep_runs_per_s', (swept * 1000) / ms, 'runs/s', { swept, ms: Math.round(ms) });

    await runtime.submit({ runId: 'with-command' }, { commandId: 'bench-command-1' });
    const answers = (await kvBytes(queue, 'workflow/commands/')).bytes + (await kvBytes(queue, 'workflow/command-times/')).bytes;
    ctx.emit('command_bytes', answers, 'B');
  } finally {
    await queue.close();
  }
}

const benchmarks: Benchmark[] = [{ name: 'runs.retention', stores: ['memory', 'fs'], run }];
export default benchmarks;
