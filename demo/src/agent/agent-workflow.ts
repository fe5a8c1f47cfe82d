/**
 * The agent, as a workflow function: research (one model call per step), a draft (one more), a
 * durable wait for a person's decision that escalates once when its timeout passes, then publish.
 * The worker registers it (`serveWorkflowRuntime({ workflows: [agent] })`) and the page starts it
 * with the same value (`client.start(agent, task)`): only its name and version cross to the worker.
 *
 * Every step's value is recorded before the function goes on. When a reload, a crash or a closed
 * tab cuts a run off, the next execution runs the function from the top: the steps already
 * recorded return their values from the run's history (their model calls are not made again) and
 * the interrupted step runs again. The same happens after the approval wait, which suspends the
 * run (no tab stays busy while it waits).
 *
 * A model step that runs out of attempts throws `StepFailedError` into the function: this one
 * catches it and waits for the person to press Retry (which also ends the simulated outage) or
 * Give up (the run fails with the step's error).
 */
import { defineWorkflow, StepFailedError, type StepAttempt, type WorkflowContext } from 'taquba-workflow';
import {
  HEARTBEAT_MS,
  MODEL_STEP_POLICY,
  researchQuestions,
  retryDelayAfter,
  SIGNALS,
  STEPS,
  type AgentResult,
  type Decision,
  type LiveMessage,
  type RetryDecision,
  type TaskSpec,
} from '../shared/agent-state.js';
import type { AttemptRecord, ModelCallRecord, ModelSettings } from '../shared/demo-db.js';
import { modelFor } from './model.js';

/** What the agent needs from the worker it runs in (the worker wires the real ones; tests their own). */
export interface AgentEnvironment {
  /** This worker's host id: an attempt it leaves open when it dies reads as interrupted. */
  readonly host: string;
  /** The model to use, read at every call (the user may change it while runs are active). */
  loadModelSettings(): Promise<ModelSettings>;
  /** Logs a model call made, or served from the run's history. */
  recordModelCall(record: Omit<ModelCallRecord, 'store'>): Promise<void>;
  /** Logs an attempt as it starts; the returned function records what happened to it. */
  startAttempt(record: Omit<AttemptRecord, 'store'>): Promise<(update: Partial<AttemptRecord>) => Promise<void>>;
  /** Streams progress to every tab. */
  post(message: LiveMessage): void;
}

let environment: AgentEnvironment | undefined;

/** Called by the worker before it serves the runtime (the page imports `agent` only to start it). */
export function provideAgentEnvironment(env: AgentEnvironment): void {
  environment = env;
}

function env(): AgentEnvironment {
  if (!environment) throw new Error('the agent runs in its worker: call provideAgentEnvironment(...) there first');
  return environment;
}

const SYSTEM_PROMPT = 'You are a careful research assistant. Answer in three short sentences.';
/** At most one stream update per step this often (ms). */
const STREAM_INTERVAL_MS = 60;


export const agent = defineWorkflow({
  name: 'research-agent',
  // Five attempts for every step, with backoff (0.5, 1, 2, 4 s) in the worker that runs it.
  steps: { retries: MODEL_STEP_POLICY.attempts - 1, backoff: MODEL_STEP_POLICY.backoff },
  async run(ctx, task: TaskSpec): Promise<AgentResult> {
    const notes: string[] = [];
    let outageOver = false;
    for (const [i, question] of researchQuestions(task.topic, task.researchCalls).entries()) {
      for (;;) {
        try {
          const note = await modelStep(ctx, task, STEPS.research(i), question, ({ attempt }) => {
            if (task.outage && !outageOver) throw new Error('model unavailable (simulated outage)');
            if (task.flaky && i === 1 && attempt === 1) throw new Error('model rate limited (simulated 429)');
          });
          notes.push(note);
          break;
        } catch (e) {
          if (!(e instanceof StepFailedError)) throw e;
          // Out of attempts: the person decides. The answer is recorded, so a replay decides alike.
          const answer = await ctx.waitForSignal<RetryDecision>(SIGNALS.retry);
          if (answer.timedOut || answer.value === 'give-up') throw e;
          outageOver = true;
        }
      }
    }

    const draft = await modelStep(ctx, task, STEPS.draft, `Write a short brief on ${task.topic} from these notes:\n${notes.join('\n')}`);

    let decision = await ctx.waitForSignal<unknown>(SIGNALS.approve, { timeoutMs: task.approvalTimeoutMs });
    if (decision.timedOut) {
      const seconds = Math.round(task.approvalTimeoutMs / 1000);
      await logged(ctx, STEPS.escalate, () => `No decision within ${seconds} s: escalated to the team lead, waiting ${seconds} s more.`);
      decision = await ctx.waitForSignal<unknown>(SIGNALS.approve, { timeoutMs: task.approvalTimeoutMs });
      if (decision.timedOut) throw new Error('no decision after escalation');
    }
    const { decision: verdict, reason } = readDecision(decision.value);
    if (verdict === 'reject') throw new Error(`rejected: ${reason === '' ? 'no reason given' : reason}`);

    const article = await logged(
      ctx,
      STEPS.publish,
      () => `# ${task.topic}\n\n${draft}\n\nSources:\n${notes.map((n, i) => `${i + 1}. ${n}`).join('\n')}`,
      () => 'Published.',
    );
    return { article, draft, notes };
  },
});

/** A decision as the page sends it (`Decision`), or as text from the CLI (`taquba signal <run>#approve approve`). */
function readDecision(value: unknown): Decision {
  if (typeof value === 'object' && value !== null && (value as Decision).decision === 'approve') return { decision: 'approve', reason: '' };
  if (value === 'approve') return { decision: 'approve', reason: '' };
  const reason = typeof value === 'object' && value !== null && typeof (value as Decision).reason === 'string' ? (value as Decision).reason : typeof value === 'string' && value !== 'reject' ? value : '';
  return { decision: 'reject', reason: reason.trim() };
}

/**
 * One model call as a step. The call is logged once it completed; when the step's value comes
 * from the run's history instead (a replay), that is logged as a memo hit: no model was called.
 */
async function modelStep(ctx: WorkflowContext, task: TaskSpec, step: string, prompt: string, before?: (attempt: StepAttempt) => void): Promise<string> {
  let ran = false;
  const text = await logged(ctx, step, async (attempt, progress) => {
    ran = true;
    before?.(attempt);
    const model = modelFor(await env().loadModelSettings());
    const answer = await model.complete({ system: SYSTEM_PROMPT, prompt }, { signal: attempt.signal, tokenDelayMs: task.tokenDelayMs, onText: progress });
    await env().recordModelCall({ runId: ctx.runId, step, memoHit: false, at: Date.now() });
    return answer;
  });
  if (!ran) {
    await env().recordModelCall({ runId: ctx.runId, step, memoHit: true, at: Date.now() });
    env().post({ type: 'log', runId: ctx.runId });
  }
  return text;
}

/**
 * `ctx.step(name, fn)` whose every attempt is logged to the demo's database as it starts and ends
 * (not a workflow effect: the page's picture of attempts, interruptions and errors). `progress`
 * streams text to every tab.
 */
function logged<T>(
  ctx: WorkflowContext,
  step: string,
  fn: (attempt: StepAttempt, progress: (text: string) => void) => T | Promise<T>,
  output: (value: T) => string = (value) => String(value),
): Promise<T> {
  return ctx.step(step, async (attempt) => {
    const e = env();
    const startedAt = Date.now();
    const update = await e.startAttempt({
      runId: ctx.runId,
      step,
      host: e.host,
      attempt: attempt.attempt,
      maxAttempts: MODEL_STEP_POLICY.attempts,
      startedAt,
      lastSeenAt: startedAt,
      endedAt: null,
      outcome: null,
      error: null,
      output: null,
      retryInMs: null,
    });
    e.post({ type: 'log', runId: ctx.runId });
    let lastSent = 0;
    const progress = (text: string): void => {
      const now = Date.now();
      if (now - lastSent < STREAM_INTERVAL_MS) return;
      lastSent = now;
      e.post({ type: 'tokens', runId: ctx.runId, step, text });
    };
    const heartbeat = setInterval(() => void update({ lastSeenAt: Date.now() }).catch(() => undefined), HEARTBEAT_MS);
    try {
      const value = await fn(attempt, progress);
      const endedAt = Date.now();
      await update({ lastSeenAt: endedAt, endedAt, outcome: 'completed', output: output(value) });
      return value;
    } catch (error) {
      const endedAt = Date.now();
      const cancelled = attempt.signal.aborted;
      const retryInMs = !cancelled && attempt.attempt < MODEL_STEP_POLICY.attempts ? retryDelayAfter(attempt.attempt) : null;
      await update({ lastSeenAt: endedAt, endedAt, outcome: cancelled ? 'cancelled' : 'failed', error: error instanceof Error ? error.message : String(error), retryInMs });
      throw error;
    } finally {
      clearInterval(heartbeat);
      e.post({ type: 'log', runId: ctx.runId });
    }
  });
}
