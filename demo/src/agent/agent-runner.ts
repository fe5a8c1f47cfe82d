/**
 * The agent, as a `StepRunner`: research (one model call per step, each memoized), draft, wait
 * for approval (a durable signal whose timeout escalates once, then gives up), publish. The
 * runtime persists everything between steps; this file only decides what one step does.
 *
 * Every model call goes through the step's memo: when a crash or reload interrupts a step after
 * its call completed, the redelivered step reads the answer back instead of calling again. Each
 * step also stages a KV record of itself (`keys.step`) that commits with its settlement, which
 * is what the page's timeline shows after a reload.
 */
import { StepError, StepOutcome, type Step, type StepRunnerObject } from 'taquba-workflow';
import {
  approvalKey,
  decodeJson,
  encodeJson,
  keys,
  MODEL_MEMO_KEY,
  researchQuestions,
  stepLabel,
  type AgentState,
  type Decision,
  type LiveMessage,
  type StepRecord,
} from '../shared/agent-state.js';
import type { ModelCallRecord, ModelSettings } from '../shared/demo-db.js';
import { modelFor } from './model.js';

/** What the agent needs from its surroundings (the worker wires the real ones; tests their own). */
export interface AgentEnvironment {
  /** The model to use, read at every call (the user may change it while runs are active). */
  loadModelSettings(): Promise<ModelSettings>;
  /** Logs a completed model call or a memo hit. */
  recordModelCall(record: Omit<ModelCallRecord, 'store'>): Promise<void>;
  /** Streams progress to every tab. */
  post(message: LiveMessage): void;
  /** Work after a model call before the step returns. Default AFTER_CALL_MS. */
  readonly afterCallMs?: number;
}

const SYSTEM_PROMPT = 'You are a careful research assistant. Answer in three short sentences.';
/** Work after a model call (the agent "files its notes"): the window in which a reload finds the answer memoized. */
const AFTER_CALL_MS = 800;
/** Longest stream update rate: one message per this many ms per step. */
const STREAM_INTERVAL_MS = 60;

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

export class AgentRunner implements StepRunnerObject {
  constructor(private readonly env: AgentEnvironment) {}

  async runStep(step: Step): Promise<StepOutcome> {
    const state = decodeJson<AgentState>(step.payload);
    const started = performance.now();
    const label = stepLabel(state);
    let memoHit = false;
    let usedModel = false;
    let output = '';

    const callModel = async (prompt: string): Promise<string> => {
      usedModel = true;
      const result = await this.modelCall(step, state, prompt);
      memoHit = result.memoHit;
      return result.text;
    };

    let outcome: StepOutcome;
    switch (state.phase) {
      case 'research': {
        if (state.task.outage) throw StepError.transient('model unavailable (simulated outage)');
        if (state.task.flaky && state.index === 1 && step.attempt === 1) throw StepError.transient('model rate limited (simulated 429), retrying');
        const question = researchQuestions(state.task.topic, state.task.researchCalls)[state.index]!;
        output = await callModel(question);
        await sleep(this.env.afterCallMs ?? AFTER_CALL_MS, step.signal);
        const notes = [...state.notes, output];
        const next: AgentState =
          state.index + 1 < state.task.researchCalls ? { ...state, index: state.index + 1, notes } : { ...state, phase: 'draft', notes };
        outcome = StepOutcome.continueNow(encodeJson(next));
        break;
      }
      case 'draft': {
        output = await callModel(`Write a short brief on ${state.task.topic} from these notes:\n${state.notes.join('\n')}`);
        await sleep(this.env.afterCallMs ?? AFTER_CALL_MS, step.signal);
        const next: AgentState = { ...state, phase: 'decide', draft: output };
        outcome = StepOutcome.continueOnSignal(encodeJson(next), approvalKey(step.runId), state.task.approvalTimeoutMs);
        break;
      }
      case 'decide':
        ({ outcome, output } = this.decide(step, state));
        break;
      case 'publish': {
        const article = `# ${state.task.topic}\n\n${state.draft ?? ''}\n\nSources:\n${state.notes.map((n, i) => `${i + 1}. ${n}`).join('\n')}`;
        output = 'Published.';
        outcome = StepOutcome.succeed(encodeJson({ article }));
        break;
      }
    }

    const record: StepRecord = {
      stepNumber: step.stepNumber,
      label,
      attempt: step.attempt,
      memoHit,
      usedModel,
      durationMs: Math.round(performance.now() - started),
      finishedAt: Date.now(),
      output,
    };
    step.effects.put(keys.step(step.runId, step.stepNumber), encodeJson(record));
    return outcome;
  }

  /** The step after the draft: woken by a decision, or by the approval timeout. */
  private decide(step: Step, state: AgentState): { outcome: StepOutcome; output: string } {
    if (step.signalPayload === null) {
      if (!state.escalated) {
        // First timeout: escalate (visible to every tab through the KV record) and wait as long again.
        step.effects.put(keys.escalation(step.runId), encodeJson({ at: Date.now() }));
        const next: AgentState = { ...state, escalated: true };
        return {
          outcome: StepOutcome.continueOnSignal(encodeJson(next), approvalKey(step.runId), state.task.approvalTimeoutMs),
          output: 'No decision in time: escalated, waiting again.',
        };
      }
      return { outcome: StepOutcome.fail('no decision after escalation'), output: 'No decision after escalation.' };
    }
    const decision = decodeJson<Decision>(step.signalPayload);
    if (decision.decision === 'reject') {
      const why = decision.reason.trim() === '' ? 'no reason given' : decision.reason.trim();
      return { outcome: StepOutcome.fail(`rejected: ${why}`), output: `Rejected: ${why}` };
    }
    return { outcome: StepOutcome.continueNow(encodeJson({ ...state, phase: 'publish' } satisfies AgentState)), output: 'Approved.' };
  }

  /** One model call through the step's memo; reports it (call or memo hit) to the demo's log. */
  private async modelCall(step: Step, state: AgentState, prompt: string): Promise<{ text: string; memoHit: boolean }> {
    let called = false;
    let lastSent = 0;
    const text = await step.memo.memoized<string>(
      MODEL_MEMO_KEY,
      async () => {
        called = true;
        const model = modelFor(await this.env.loadModelSettings());
        return model.complete(
          { system: SYSTEM_PROMPT, prompt },
          {
            signal: step.signal,
            tokenDelayMs: state.task.tokenDelayMs,
            onText: (soFar) => {
              const now = performance.now();
              if (now - lastSent < STREAM_INTERVAL_MS) return;
              lastSent = now;
              this.env.post({ type: 'tokens', runId: step.runId, stepNumber: step.stepNumber, text: soFar });
            },
          },
        );
      },
      { validate: (v) => typeof v === 'string' },
    );
    this.env.post({ type: 'tokens', runId: step.runId, stepNumber: step.stepNumber, text });
    // Logged after the memo put: a call counts as completed once its answer is durable.
    await this.env.recordModelCall({ runId: step.runId, stepNumber: step.stepNumber, memoHit: !called, at: Date.now() });
    this.env.post({ type: 'model-call', runId: step.runId, stepNumber: step.stepNumber, memoHit: !called });
    return { text, memoHit: !called };
  }
}
