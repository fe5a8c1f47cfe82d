/**
 * The timeline of single 3-step runs on the filesystem store, for docs/performance.md: when the
 * submission, each step and each WAL append (start, end) happen, in ms from `submit`, after a
 * warm-up of sequential runs. Shows what of a run's latency is durable appends and what is CPU
 * between them.
 *
 *   npx tsx bench/run-timeline.ts [runs shown, default 3]
 */
import type { AppendLog, AppendLogStore } from '../src/core/objects/append-log.js';
import type { ObjectStore } from '../src/core/objects/object-store.js';
import { Queue } from '../src/core/queue/index.js';
import { HEADER_STEP, NoopTerminalHook, StepOutcome, WorkflowRuntime, type Step } from '../src/core/workflow/index.js';
import { FileSystemObjectStore } from '../src/node/fs-store.js';
import { watchTerminalAcks } from './chain-workload.js';
import { now, tempDir } from './harness.js';

const STEPS = 3;
const WARMUP = 3000;
const shown = Number(process.argv[2] ?? 3);
const quiet = { warn: () => undefined };

const marks: [string, number][] = [];
const mark = (what: string): number => marks.push([what, now()]);

/** An append log whose appends are marked at start and end. */
function markedLog(log: AppendLog): AppendLog {
  return {
    key: log.key,
    get size() {
      return log.size;
    },
    async append(data) {
      mark(`append start (${data.length} B)`);
      await log.append(data);
      mark('append end');
    },
    close: () => log.close(),
  };
}

/** `inner`, every call passed through, with the appends of its logs marked. */
function markingAppends(inner: ObjectStore): ObjectStore {
  const logs = inner.appendLogs;
  if (!logs) throw new Error('the store has no append logs');
  const marked: AppendLogStore = {
    createLog: async (key) => markedLog(await logs.createLog(key)),
    exists: (key) => logs.exists(key),
    ...(logs.sync && { sync: logs.sync.bind(logs) }),
  };
  return {
    get: (key, options) => inner.get(key, options),
    put: (key, data, options) => inner.put(key, data, options),
    delete: (key) => inner.delete(key),
    list: (prefix, options) => inner.list(prefix, options),
    ...(inner.deleteMany && { deleteMany: inner.deleteMany.bind(inner) }),
    ...(inner.lockWriter && { lockWriter: inner.lockWriter.bind(inner) }),
    appendLogs: marked,
  };
}

const store = markingAppends(new FileSystemObjectStore({ root: tempDir('run-timeline') }));
const queue = await Queue.open(store, 'bench', { logger: quiet });
const terminal = watchTerminalAcks(queue, (claim) => claim.job.headers[HEADER_STEP] === String(STEPS - 1));
const runner = async (step: Step) => {
  mark(`step ${step.stepNumber} runs`);
  return step.stepNumber < STEPS - 1 ? StepOutcome.continueNow(step.payload) : StepOutcome.succeed(step.payload);
};
const runtime = new WorkflowRuntime(queue, store, runner, new NoopTerminalHook(), { logger: quiet });
const worker = runtime.spawn();
const runOnce = async (runId: string): Promise<void> => {
  const ended = new Promise<void>((resolve) => terminal.set(runId, resolve));
  mark('submit');
  await runtime.submit({ runId, input: new Uint8Array(100) });
  mark('submit resolved');
  await ended;
  mark('terminal ack committed');
};
for (let i = 0; i < WARMUP; i++) await runOnce(`warmup-${i}`);
for (let i = 0; i < shown; i++) {
  marks.length = 0;
  await runOnce(`shown-${i}`);
  const t0 = marks[0]![1];
  console.log(marks.map(([what, t]) => `${(t - t0).toFixed(3).padStart(7)} ms  ${what}`).join('\n'));
  console.log('');
}
await worker.shutdown();
await queue.close();
