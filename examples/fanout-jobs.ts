/**
 * fanout_jobs: a workflow step fans out one typed job per URL to a shared `JobRunner`, joins the
 * typed results and memoizes the aggregate, so a retry of the step does not fan out again.
 *
 * The URLs are served by a local HTTP server this example starts on 127.0.0.1. Step 0 fails once
 * on purpose after the join (a stand-in for a crash): its retry finds the aggregate in the memo
 * and submits nothing; the server's request count shows no page was fetched twice. Two layers
 * make the fan-out retry-safe: the memoized aggregate (a retry after the join re-submits
 * nothing) and the per-URL idempotency keys (a retry that crashed mid-fan-out collapses onto the
 * jobs in flight or finished). Both runners share one queue handle under different queue names.
 *
 *   npm run example:fanout-jobs
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defineJob, JobRunner, MemoryObjectStore, Queue, StepError, StepOutcome, WorkflowRuntime, type RunOutcome, type TerminalHook } from 'taquba-workflow';

// Text in and out of the runtime's byte payloads.
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const fromUtf8 = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

// The pages: path -> body size in bytes.
const PAGES: Record<string, number> = { '/alpha': 2100, '/beta-long': 3300, '/gamma': 2100 };
let served = 0;
const server = createServer((req, res) => {
  const size = PAGES[req.url ?? ''];
  served++;
  if (size === undefined) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(size));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

// The typed job: a URL in, the page size out; its own error for a non-2xx answer.
const fetchPage = defineJob<{ url: string }, { url: string; bytes: number }, { status: number }>({
  name: 'example.fetch_page',
  idempotencyKey: ({ url }) => `fetch:${url}`,
  run: async ({ url }, ctx) => {
    const res = await fetch(url, { signal: ctx.signal });
    if (!res.ok) ctx.fail({ status: res.status });
    return { url, bytes: (await res.arrayBuffer()).byteLength };
  },
});

const store = new MemoryObjectStore();
const queue = await Queue.open(store, 'fanout', { logger: false, queueConfigs: { 'fanout-steps': { retryBackoffBaseMs: 10, retryBackoffMaxMs: 10 } } });
const jobs = new JobRunner(queue, store, { queueName: 'jobs', maxConcurrentJobs: 4, pollIntervalMs: 20 }).register(fetchPage);
const stop = new AbortController();
const jobsWorker = jobs.spawn(); // spawned first: the step awaits its jobs

const printOutcome: TerminalHook = {
  async onTermination(outcome: RunOutcome) {
    console.log(`=== run ${outcome.runId} ${outcome.status} (final_step=${outcome.finalStep}) ===`);
    console.log(outcome.result ? fromUtf8(outcome.result) : outcome.error);
    stop.abort();
  },
};

const runtime = new WorkflowRuntime(
  queue,
  store,
  async (step) => {
    if (step.stepNumber === 0) {
      if ((await step.memo.get('fetch-results')) !== null) console.log('[step 0] memo hit; fan-out not re-submitted');
      const aggregate = await step.memo.memoized('fetch-results', async () => {
        const urls = fromUtf8(step.payload).split('\n');
        const handles = await Promise.all(urls.map((url) => jobs.submit(fetchPage, { url })));
        const results = await Promise.all(handles.map((h) => h.result()));
        for (const r of results) console.log(`[step 0] fetched ${r.url}: ${r.bytes} bytes`);
        const total = results.reduce((sum, r) => sum + r.bytes, 0);
        return [...results.map((r) => `${r.url}: ${r.bytes} bytes`), `total: ${total} bytes`].join('\n');
      });
      if (step.attempt === 1) {
        console.log('[step 0] simulated failure after the join (attempt 1); the step is retried');
        throw StepError.transient('simulated failure after the join');
      }
      return StepOutcome.continueNow(utf8(aggregate));
    }
    return StepOutcome.succeed(utf8(`fetch report\n------------\n${fromUtf8(step.payload)}`));
  },
  printOutcome,
  { queueName: 'fanout-steps', pollIntervalMs: 20, logger: false },
);

await runtime.submit({ input: utf8(Object.keys(PAGES).map((p) => base + p).join('\n')) });
await runtime.spawn(stop.signal).done;
await jobsWorker.shutdown();
await queue.close();
server.close();
console.log(`server answered ${served} requests`);
