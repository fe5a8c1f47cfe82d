/**
 * crash_resume: recovery you can watch. One run of three stages (fetch, transform, publish), one
 * stage per step, each made of two slow units of work. Every finished unit is recorded in the
 * step's memo; every finished stage commits as the step's outcome. Interrupt it at any moment
 * (Ctrl-C, or kill it) and start it again: the same run resumes, committed stages are not run
 * again, and the units the interrupted stage already finished are served from the memo.
 *
 *   npm start                      (same as npm run example:crash-resume)
 *
 * State lives on the filesystem under ./.taquba (TAQUBA_DIR overrides it); delete the directory
 * to start from scratch. CRASH_RESUME_UNIT_MS sets the length of one unit (default 3000).
 */
import { isTaqubaError, Queue, StepOutcome, WorkflowRuntime, type RunOutcome, type Step } from 'taquba-workflow';
import { FileSystemObjectStore } from 'taquba-workflow/node';

// Text in and out of the runtime's byte payloads.
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const fromUtf8 = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

const ROOT = process.env.TAQUBA_DIR ?? '.taquba';
const UNIT_MS = Number(process.env.CRASH_RESUME_UNIT_MS ?? 3000);
const RUN_ID = 'crash-resume-demo';
const STAGES = ['fetch', 'transform', 'publish'] as const;
const UNITS_PER_STAGE = 2;
const TICKS = 3;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function runStage(step: Step): Promise<StepOutcome> {
  const stage = STAGES[step.stepNumber];
  const done = step.payload.length === 0 ? [] : fromUtf8(step.payload).split(',');
  const note = step.interruptions > 0 ? ` (again: interrupted ${step.interruptions} time(s) before, attempt ${step.attempt})` : '';
  console.log(`[${stage}] stage ${step.stepNumber + 1} of ${STAGES.length} starts${note}`);
  for (let unit = 0; unit < UNITS_PER_STAGE; unit++) {
    const key = `unit-${unit}`;
    if ((await step.memo.get(key)) !== null) {
      console.log(`[${stage}] unit ${unit}: already recorded in the memo, not re-executed`);
      continue;
    }
    // Keep the lease ahead of the work so the queue never hands this step to someone else.
    step.lease.ensureAtLeast(UNIT_MS * 2);
    for (let left = TICKS; left > 0; left--) {
      console.log(`[${stage}] unit ${unit}: working, ${+((left * UNIT_MS) / TICKS / 1000).toFixed(1)} s left`);
      await sleep(UNIT_MS / TICKS);
    }
    await step.memo.put(key, utf8(new Date().toISOString()));
    console.log(`[${stage}] unit ${unit}: done, recorded in the memo`);
  }
  const committed = [...done, stage].join(',');
  if (step.stepNumber === STAGES.length - 1) return StepOutcome.succeed(utf8(committed));
  console.log(`[${stage}] stage committed; next stage starts from "${committed}"`);
  return StepOutcome.continueNow(utf8(committed));
}

const store = new FileSystemObjectStore({ root: ROOT });
// Opening the queue recovers whatever an interrupted process held: its claimed step is back in
// the queue at once, with an interruption counted (not a failed attempt: step.attempt stays).
const queue = await Queue.open(store, 'examples/crash-resume', { defaultQueueConfig: { maxAttempts: 100, retryBackoffBaseMs: 200 } }).catch((e: unknown) => {
  // One writer process per store: a second `npm start` is refused at once instead of fencing the first.
  if (!isTaqubaError(e, 'LOCKED')) throw e;
  console.error(`another process is running this example on ${ROOT} (${String(e.details.holder)}); wait for it to finish or stop it`);
  process.exit(1);
});
console.log(`store: ${ROOT} (writer epoch ${queue.writerEpoch})`);

let finished!: (outcome: RunOutcome) => void;
const terminated = new Promise<RunOutcome>((resolve) => (finished = resolve));
const runtime = new WorkflowRuntime(queue, store, runStage, { onTermination: async (o) => finished(o) }, {
  memoPrefix: 'examples/crash-resume-memo',
  pollIntervalMs: 200,
});

process.once('SIGINT', () => {
  console.log('\ninterrupted: nothing is cleaned up on purpose; run again to resume');
  process.exit(130);
});

const submitted = await runtime.submit({ runId: RUN_ID });
if (submitted.newlySubmitted) console.log(`submitted run ${RUN_ID}`);
else console.log(`run ${RUN_ID} is already in flight (job ${submitted.jobId}); resuming it`);

const worker = runtime.spawn();
// The worker only stops on its own when it cannot go on, e.g. a second process opened the same
// store and fenced this one (the store has exactly one writer).
const stopped = worker.done.then(
  () => undefined,
  (e: unknown) => e,
);
const outcome = await Promise.race([terminated, stopped.then((e) => ({ failure: e }))]);
if ('failure' in outcome) {
  console.log(`the worker stopped: ${(outcome.failure as Error)?.message ?? String(outcome.failure)}`);
  process.exit(1);
}
await worker.shutdown();
await queue.close();
if (outcome.status === 'succeeded') {
  console.log(`run ${RUN_ID} succeeded after ${outcome.finalStep + 1} steps, result: ${fromUtf8(outcome.result!)}`);
} else {
  console.log(`run ${RUN_ID} ${outcome.status}: ${outcome.error ?? 'cancelled from outside'}`);
}
console.log(`to start from scratch, delete ${ROOT}; running again now starts a new run that finds every unit in the memo`);
