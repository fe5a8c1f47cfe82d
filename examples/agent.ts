/**
 * agent: a two-stage agent (research, then write) as a workflow function on the filesystem store.
 * It researches the topic in a few turns, each a model call plus a stub `lookup_fact` tool, then
 * writes the summary. Every model call is a `ctx.step`: kill the process at any point and run it
 * again, and it resumes where the store says it was, without calling the model again for any
 * answer it already recorded.
 *
 *   npm run example:agent -- "why durable execution matters"
 *
 * Model: with OPENAI_API_KEY (and optionally OPENAI_BASE_URL, OPENAI_MODEL) it streams from the
 * OpenAI-compatible endpoint over fetch; OPENAI_BASE_URL alone targets a local compatible server
 * without a key; otherwise a deterministic local model, so it runs offline. The client is shared
 * with the browser demo (examples/shared/model-client.ts).
 *
 * State lives under ./.taquba (TAQUBA_DIR overrides it). AGENT_TOKEN_DELAY_MS paces the local
 * model (default 40). AGENT_MODEL_CALLS_FILE, if set, gets one line per real model call.
 */
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { defineWorkflow, isTaqubaError, Queue, WorkflowRuntime } from 'taquba-workflow';
import { FileSystemObjectStore } from 'taquba-workflow/node';
import { OpenAiCompatibleModel, SimulatedModel, type Model } from './shared/model-client.js';

const ROOT = process.env.TAQUBA_DIR || '.taquba';
const TOPIC = process.argv.slice(2).join(' ').trim() || 'why durable execution matters for AI agents';
const TOKEN_DELAY_MS = Number(process.env.AGENT_TOKEN_DELAY_MS ?? 40);
const CALLS_FILE = process.env.AGENT_MODEL_CALLS_FILE || undefined;
const RESEARCH_TURNS = 2;

function chooseModel(): Model {
  const key = process.env.OPENAI_API_KEY || '';
  const base = process.env.OPENAI_BASE_URL || '';
  if (!key && !base) return new SimulatedModel();
  return new OpenAiCompatibleModel({ endpoint: base || 'https://api.openai.com/v1', model: process.env.OPENAI_MODEL || 'gpt-4o-mini', apiKey: key });
}
const model = chooseModel();

/** The stub tool the research agent consults between turns. */
function lookupFact(topic: string, turn: number): string {
  const facts = ['a step that commits is never run again', 'a crash loses at most the step in flight', 'retries are safe when side effects are memoized'];
  return `${facts[(topic.length + turn) % facts.length]} (lookup_fact #${turn + 1})`;
}

/** One model call, streamed to the terminal. Run inside `ctx.step`, so its answer is recorded once and never paid for again. */
async function callModel(stage: string, system: string, prompt: string, signal: AbortSignal): Promise<string> {
  if (CALLS_FILE) appendFileSync(CALLS_FILE, `${stage}\n`);
  console.log(`[${stage}] calling ${model.name}`);
  let shown = 0;
  const text = await model.complete(
    { system, prompt },
    {
      signal,
      tokenDelayMs: TOKEN_DELAY_MS,
      onText: (soFar) => {
        process.stdout.write(soFar.slice(shown));
        shown = soFar.length;
      },
    },
  );
  process.stdout.write('\n');
  return text;
}

// The workflow: research in a few turns, then write. Each model call is a step: its answer is
// durable before the workflow goes on, and a rerun after a crash gets it back without a call.
const agent = defineWorkflow({
  name: 'agent',
  async run(ctx, topic: string) {
    const findings: string[] = [];
    for (let turn = 0; turn < RESEARCH_TURNS; turn++) {
      const prompt = `${topic}\nKnown fact: ${lookupFact(topic, turn)}\nFindings so far: ${findings.join(' | ') || 'none'}`;
      const answer = await ctx.step(`research-${turn}`, ({ signal }) => callModel('research', 'You are a careful research assistant. Answer in two sentences.', prompt, signal));
      findings.push(answer.trim());
    }
    if (!ctx.replaying) console.log(`[research] done: ${findings.length} findings committed`);
    const numbered = findings.map((f, i) => `${i + 1}. ${f}`).join('\n');
    return ctx.step('summary', ({ signal }) => callModel('write', 'You are a concise technical writer. Write one short paragraph.', `${topic}\n${numbered}`, signal));
  },
});

const store = new FileSystemObjectStore({ root: ROOT });
const queue = await Queue.open(store, 'examples/agent').catch((e: unknown) => {
  if (!isTaqubaError(e, 'LOCKED')) throw e;
  console.error(`another process is running this example on ${ROOT} (${String(e.details.holder)}); wait for it or stop it`);
  process.exit(1);
});
const runtime = new WorkflowRuntime(queue, store, { workflows: [agent] });

process.once('SIGINT', () => {
  console.log('\ninterrupted; run again to resume');
  process.exit(130);
});

const run = await runtime.start(agent, TOPIC, { runId: `agent-${createHash('sha256').update(TOPIC).digest('hex').slice(0, 16)}` });
console.log(`${run.newlySubmitted ? 'submitted' : 'resuming'} run ${run.runId} (model: ${model.name})`);
const worker = runtime.spawn();
try {
  const summary = await run.result();
  console.log(`=== summary (run ${run.runId}) ===`);
  console.log(summary);
} catch (e) {
  console.log(`run ${run.runId} did not succeed: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
} finally {
  await worker.shutdown();
  await queue.close();
}
