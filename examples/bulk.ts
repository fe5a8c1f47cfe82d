/**
 * bulk: summarise a few hundred generated documents with a two-phase pipeline (extract the key
 * lines, then summarise them with a model), with a live progress bar (counts, rate, ETA, cost),
 * a failure threshold, and resume after Ctrl-C: run it again and the batch goes on where it
 * stopped; finished documents are not summarised again and the output file gets no duplicates.
 *
 *   npm run example:bulk
 *   npm run example:bulk -- --docs 50 --fail-every 7 --max-failure-fraction 0.1
 *
 * Every `--fail-every`-th document (default 97) is empty, so its extract phase fails; the batch
 * stops once more than `--max-failure-fraction` (default 0.05) of the documents failed. The
 * summaries go to <dir>/summaries.jsonl with the stream cursor in <dir>/summaries.cursor, so a
 * restarted run appends exactly the items the last one had not written. State lives under
 * ./.taquba-bulk (TAQUBA_DIR overrides it). The model is the shared client of examples/agent.ts:
 * OPENAI_API_KEY / OPENAI_BASE_URL for a real one, else the local model (BULK_TOKEN_DELAY_MS
 * paces it, default 10). Without a terminal (a pipe, CI) progress is printed as plain lines.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { Bulk, isTaqubaError, pipeline, Queue, StepError, type BatchProgress } from 'taquba-workflow';
import { FileSystemObjectStore } from 'taquba-workflow/node';
import { OpenAiCompatibleModel, SimulatedModel, type Model } from './shared/model-client.js';

const { values: args } = parseArgs({
  options: {
    docs: { type: 'string', default: process.env.BULK_DOCS ?? '300' },
    'fail-every': { type: 'string', default: '97' },
    'max-failure-fraction': { type: 'string', default: '0.05' },
    concurrency: { type: 'string', default: '32' },
  },
});
function intArg(name: string, value: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    console.error(`--${name} must be an integer >= ${min}, got ${JSON.stringify(value)}`);
    process.exit(2);
  }
  return n;
}
const DOCS = intArg('docs', args.docs, 1);
const FAIL_EVERY = intArg('fail-every', args['fail-every'], 0);
const CONCURRENCY = intArg('concurrency', args.concurrency, 1);
const MAX_FAILURE_FRACTION = Number(args['max-failure-fraction']);
if (!(MAX_FAILURE_FRACTION >= 0 && MAX_FAILURE_FRACTION <= 1)) {
  console.error(`--max-failure-fraction must be between 0 and 1, got ${JSON.stringify(args['max-failure-fraction'])}`);
  process.exit(2);
}
const ROOT = process.env.TAQUBA_DIR || '.taquba-bulk';
const TOKEN_DELAY_MS = Number(process.env.BULK_TOKEN_DELAY_MS ?? 10);
// Prices per token of a small hosted model, to show a money column.
const USD_PER_TOKEN_IN = 0.15e-6;
const USD_PER_TOKEN_OUT = 0.6e-6;

const model: Model =
  process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL
    ? new OpenAiCompatibleModel({ endpoint: process.env.OPENAI_BASE_URL || 'https://api.openai.com/v1', model: process.env.OPENAI_MODEL || 'gpt-4o-mini', apiKey: process.env.OPENAI_API_KEY || '' })
    : new SimulatedModel();

interface Doc {
  id: string;
  title: string;
  text: string;
}

/** Deterministic documents, so every run (and every resume) submits the same batch. */
function generate(count: number): Doc[] {
  const subjects = ['invoice', 'incident report', 'meeting notes', 'design review', 'support ticket', 'release plan'];
  return Array.from({ length: count }, (_, i) => {
    const id = `doc-${String(i).padStart(4, '0')}`;
    const subject = subjects[i % subjects.length]!;
    const empty = FAIL_EVERY > 0 && i % FAIL_EVERY === FAIL_EVERY - 1;
    const text = empty ? '' : [`TITLE: ${subject} ${i}`, `OWNER: team-${i % 9}`, `BODY: ${'The ' + subject + ' covers item ' + i + '. '.repeat(1)}${'Details follow. '.repeat(1 + (i % 4))}`].join('\n');
    return { id, title: `${subject} ${i}`, text };
  });
}

const tokens = (text: string): number => Math.ceil(text.split(/\s+/).filter(Boolean).length * 1.3);

const summarise = pipeline<Doc>()
  .phase('extract', (doc, ctx) => {
    if (doc.text.trim() === '') throw StepError.permanent(`document ${doc.id} is empty`);
    const fields = Object.fromEntries(doc.text.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]));
    ctx.cost('chars', doc.text.length);
    return { title: fields.TITLE ?? doc.title, body: fields.BODY ?? '' };
  })
  .phase('summarise', async (fields, ctx) => {
    const prompt = `${fields.title}\n${fields.body}`;
    const summary = await model.complete({ system: 'Summarise the document in one sentence.', prompt }, { signal: ctx.signal, tokenDelayMs: TOKEN_DELAY_MS, onText: () => undefined });
    const tin = tokens(prompt);
    const tout = tokens(summary);
    ctx.cost('tokens_in', tin);
    ctx.cost('tokens_out', tout);
    ctx.cost('usd', tin * USD_PER_TOKEN_IN + tout * USD_PER_TOKEN_OUT);
    return { title: fields.title, summary };
  });

/** Draws progress: a bar on a terminal, a line every 10% (and at the end) otherwise. */
function progressView(total: number): { update(p: BatchProgress): void; stop(): void } {
  const money = (p: BatchProgress) => `$${(p.cost.usd ?? 0).toFixed(4)}`;
  const eta = (p: BatchProgress) => (p.etaMs === null ? '?' : `${Math.ceil(p.etaMs / 1000)}s`);
  if (process.stdout.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: '{bar} {percentage}% | {value}/{total} | ok {ok} failed {failed} cancelled {cancelled} | {rate}/s | ETA {etaText} | {money}', hideCursor: true, clearOnComplete: false, etaBuffer: 50 },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, { ok: 0, failed: 0, cancelled: 0, rate: '0.0', etaText: '?', money: '$0.0000' });
    return {
      update: (p) => bar.update(p.done, { ok: p.counts.succeeded, failed: p.counts.failed, cancelled: p.counts.cancelled, rate: p.itemsPerSecond.toFixed(1), etaText: eta(p), money: money(p) }),
      stop: () => bar.stop(),
    };
  }
  let nextTenth = 0;
  let printedDone = -1;
  return {
    update: (p) => {
      const tenth = Math.floor(p.doneFraction * 10);
      if ((tenth < nextTenth && !p.finished) || p.done === printedDone) return;
      nextTenth = tenth + 1;
      printedDone = p.done;
      console.log(`progress ${p.done}/${p.total} (${Math.round(p.doneFraction * 100)}%) ok=${p.counts.succeeded} failed=${p.counts.failed} cancelled=${p.counts.cancelled} rate=${p.itemsPerSecond.toFixed(1)}/s eta=${eta(p)} cost=${money(p)}`);
    },
    stop: () => undefined,
  };
}

mkdirSync(ROOT, { recursive: true });
const store = new FileSystemObjectStore({ root: ROOT });
const queue = await Queue.open(store, 'examples/bulk', { logger: false, defaultQueueConfig: { maxAttempts: 3, retryBackoffBaseMs: 200 } }).catch((e: unknown) => {
  if (!isTaqubaError(e, 'LOCKED')) throw e;
  console.error(`another process is running this example on ${ROOT} (${String(e.details.holder)}); wait for it or stop it`);
  process.exit(1);
});
const bulk = new Bulk(queue, store, summarise, { maxConcurrentItems: CONCURRENCY, logger: false });
const worker = bulk.spawn();

const batchId = `docs-${DOCS}-every-${FAIL_EVERY}`;
const docs = generate(DOCS);
const batch = await bulk.submit(docs, { batchId, key: (d) => d.id, failurePolicy: { maxFailureFraction: MAX_FAILURE_FRACTION } });
const resumedFrom = batch.progress().done;
console.log(`batch ${batchId}: ${DOCS} documents, model ${model.name}${resumedFrom > 0 ? `, resuming with ${resumedFrom} already done` : ''}`);

const view = progressView(DOCS);
const unsubscribe = batch.onProgress((p) => view.update(p));
view.update(batch.progress());
process.once('SIGINT', () => {
  view.stop();
  const p = batch.progress();
  console.log(`\ninterrupted at ${p.done}/${p.total}; run again to resume (finished documents are kept)`);
  process.exit(130);
});

// The output file follows the durable completion order; the cursor says what it already holds.
const outFile = join(ROOT, 'summaries.jsonl');
const cursorFile = join(ROOT, 'summaries.cursor');
const after = existsSync(cursorFile) ? readFileSync(cursorFile, 'utf8').trim() || undefined : undefined;
for await (const r of batch.results(after === undefined ? {} : { after })) {
  appendFileSync(outFile, `${JSON.stringify({ key: r.key, status: r.status, ...(r.output ? { summary: r.output.summary } : {}), ...(r.error ? { error: r.error } : {}) })}\n`);
  writeFileSync(cursorFile, r.cursor);
}
const report = await batch.done();
unsubscribe();
view.update(batch.progress());
view.stop();
await worker.shutdown();
await queue.close();

console.log(`${report.total} documents: ${report.succeeded} succeeded, ${report.failed} failed, ${report.cancelled} cancelled`);
if (report.failedKeys.length > 0) console.log(`failed: ${report.failedKeys.join(', ')}`);
for (const [phase, cost] of Object.entries(report.cost.phases)) {
  console.log(`cost ${phase}: ${Object.entries(cost).map(([m, v]) => `${m}=${m === 'usd' ? v.toFixed(6) : v}`).join(' ')}`);
}
console.log(`cost total: ${Object.entries(report.cost.total).map(([m, v]) => `${m}=${m === 'usd' ? v.toFixed(6) : v}`).join(' ')}`);
console.log(`summaries: ${outFile}`);
if (report.outcome === 'stopped') {
  console.log(`stopped by the failure policy: ${report.stopReason}`);
  process.exitCode = 3;
}
