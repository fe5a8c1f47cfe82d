/**
 * agent: a two-stage agent (research, then write) as a durable workflow on the filesystem store.
 * Step 0 researches the topic in a few turns, each a model call plus a stub `lookup_fact` tool;
 * its findings are the payload of step 1, which writes the summary. Every model call goes
 * through the step's memo, and the findings commit with step 0: kill the process at any point
 * and run it again, and it resumes where the store says it was, at the writing stage if research
 * had finished, without calling the model for research again.
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
import { isTaqubaError, Queue, StepError, StepOutcome, WorkflowRuntime, type RunOutcome, type Step } from 'taquba-workflow';
import { FileSystemObjectStore } from 'taquba-workflow/node';
import { OpenAiCompatibleModel, SimulatedModel, type Model } from './shared/model-client.js';

// Text in and out of the runtime's byte payloads.
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const fromUtf8 = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

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

/** One model call through the step's memo: a redelivered step reads the answer back instead of paying again. */
async function callModel(step: Step, memoKey: string, stage: string, system: string, prompt: string): Promise<string> {
  return step.memo.memoized(memoKey, async () => {
    if (CALLS_FILE) appendFileSync(CALLS_FILE, `${stage}\n`);
    console.log(`[${stage}] calling ${model.name}`);
    let shown = 0;
    const text = await model.complete(
      { system, prompt },
      {
        signal: step.signal,
        tokenDelayMs: TOKEN_DELAY_MS,
        onText: (soFar) => {
          process.stdout.write(soFar.slice(shown));
          shown = soFar.length;
        },
      },
    );
    process.stdout.write('\n');
    return text;
  });
}

interface Findings {
  topic: string;
  findings: string[];
}

async function research(step: Step): Promise<StepOutcome> {
  const topic = step.headers.topic ?? TOPIC;
  console.log(`[research] step 0: researching "${topic}"`);
  const findings: string[] = [];
  for (let turn = 0; turn < RESEARCH_TURNS; turn++) {
    const fact = lookupFact(topic, turn);
    const answer = await callModel(step, `research-turn-${turn}`, 'research', 'You are a careful research assistant. Answer in two sentences.', `${topic}\nKnown fact: ${fact}\nFindings so far: ${findings.join(' | ') || 'none'}`);
    findings.push(answer.trim());
  }
  if (findings.every((f) => f === '')) throw StepError.transient('the research produced no findings; retrying');
  console.log(`[research] done: ${findings.length} findings committed`);
  return StepOutcome.continueNow(utf8(JSON.stringify({ topic, findings } satisfies Findings)));
}

async function write(step: Step): Promise<StepOutcome> {
  const { topic, findings } = JSON.parse(fromUtf8(step.payload)) as Findings;
  console.log(`[write] step 1: writing from ${findings.length} findings`);
  const summary = await callModel(step, 'summary', 'write', 'You are a concise technical writer. Write one short paragraph.', `${topic}\n${findings.map((f, i) => `${i + 1}. ${f}`).join('\n')}`);
  return StepOutcome.succeed(utf8(summary));
}

const store = new FileSystemObjectStore({ root: ROOT });
const queue = await Queue.open(store, 'examples/agent', { defaultQueueConfig: { maxAttempts: 5, retryBackoffBaseMs: 500 } }).catch((e: unknown) => {
  if (!isTaqubaError(e, 'LOCKED')) throw e;
  console.error(`another process is running this example on ${ROOT} (${String(e.details.holder)}); wait for it or stop it`);
  process.exit(1);
});

let finished!: (outcome: RunOutcome) => void;
const terminated = new Promise<RunOutcome>((resolve) => (finished = resolve));
const runtime = new WorkflowRuntime(queue, store, (step) => (step.stepNumber === 0 ? research(step) : write(step)), { onTermination: async (o) => finished(o) }, {
  memoPrefix: 'examples/agent-memo',
  maxConcurrentSteps: 2,
  pollIntervalMs: 100,
});

process.once('SIGINT', () => {
  console.log('\ninterrupted; run again to resume');
  process.exit(130);
});

const runId = `agent-${createHash('sha256').update(TOPIC).digest('hex').slice(0, 16)}`;
const submitted = await runtime.submit({ runId, headers: { topic: TOPIC } });
if (submitted.newlySubmitted) {
  console.log(`submitted run ${runId} (model: ${model.name})`);
} else {
  const run = await runtime.getRun(runId);
  const stage = run?.currentStep === 1 ? 'write' : 'research';
  console.log(`resuming run ${runId} at step ${run?.currentStep ?? 0} (${stage}) (model: ${model.name})`);
}

const worker = runtime.spawn();
const outcome = await terminated;
await worker.shutdown();
await queue.close();
if (outcome.status === 'succeeded') {
  console.log(`=== summary (run ${runId}, ${outcome.finalStep + 1} steps) ===`);
  console.log(fromUtf8(outcome.result!));
} else {
  console.log(`run ${runId} ${outcome.status}: ${outcome.error ?? 'cancelled'}`);
  process.exitCode = 1;
}
