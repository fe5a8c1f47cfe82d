/**
 * What the page and the agent's worker agree on: the shape of a task, the state a run carries
 * from step to step, the approval signal, and the caller-KV keys the demo keeps its own records
 * under. Everything is JSON so it reads the same on both sides of the worker boundary.
 */

/** The stores the demo can run on; both live in this browser's origin. */
export type StoreKind = 'indexeddb' | 'opfs';

/** Name of the runtime's store (and of its Web Lock and BroadcastChannel). */
export const STORE_NAME = 'agent-demo';

/** What the user asks for when starting a task. */
export interface TaskSpec {
  readonly topic: string;
  /** Research model calls, one per step. */
  readonly researchCalls: number;
  /** How long the run waits for a decision before escalating (and then as long again before it gives up). */
  readonly approvalTimeoutMs: number;
  /** Delay of the simulated model between words. */
  readonly tokenDelayMs: number;
  /** The second research call is rate limited on its first attempt (shows a scheduled retry). */
  readonly flaky: boolean;
  /** Every research call fails: the step runs out of attempts and lands in the dead letters. */
  readonly outage: boolean;
}

export type Phase = 'research' | 'draft' | 'decide' | 'publish';

/** The payload of every step: the task plus what the agent has produced so far. */
export interface AgentState {
  readonly task: TaskSpec;
  readonly phase: Phase;
  /** Index of the research call (phase `research`). */
  readonly index: number;
  readonly notes: readonly string[];
  readonly draft: string | null;
  /** Set once the approval wait timed out and the run was escalated. */
  readonly escalated: boolean;
}

/** The decision a person sends as the approval signal. */
export interface Decision {
  readonly decision: 'approve' | 'reject';
  readonly reason: string;
}

/** What the demo stores about one finished step (a KV write staged by the step itself). */
export interface StepRecord {
  readonly stepNumber: number;
  readonly label: string;
  readonly attempt: number;
  /** The model call was served from the step's memo (it completed before a crash). */
  readonly memoHit: boolean;
  readonly usedModel: boolean;
  readonly durationMs: number;
  readonly finishedAt: number;
  readonly output: string;
}

/** What the terminal hook stores about a finished run. */
export interface OutcomeRecord {
  readonly status: 'succeeded' | 'failed' | 'cancelled';
  readonly error: string | null;
  readonly finalStep: number;
  readonly finishedAt: number;
  readonly article: string | null;
}

/** Stored with the submission, in the same transaction as the run's first step. */
export interface RunMeta {
  readonly topic: string;
  readonly createdAt: number;
  readonly researchCalls: number;
}

export const keys = {
  runsPrefix: 'demo/runs/',
  run: (runId: string) => `demo/runs/${runId}`,
  outcome: (runId: string) => `demo/outcome/${runId}`,
  stepsPrefix: (runId: string) => `demo/steps/${runId}/`,
  step: (runId: string, stepNumber: number) => `demo/steps/${runId}/${String(stepNumber).padStart(4, '0')}`,
  escalation: (runId: string) => `demo/escalated/${runId}`,
} as const;

/** The correlation key the run's approval step waits on. */
export const approvalKey = (runId: string): string => `approval:${runId}`;

/** The memo key of a step's model call. */
export const MODEL_MEMO_KEY = 'model-call';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

export function decodeJson<T>(bytes: Uint8Array): T {
  return JSON.parse(decoder.decode(bytes)) as T;
}

/** The research questions of a topic, in order (deterministic, so a redelivered step asks the same). */
export function researchQuestions(topic: string, count: number): string[] {
  const angles = [
    `What is ${topic}, in two sentences?`,
    `What problems does ${topic} solve, and for whom?`,
    `What are the main risks or criticisms of ${topic}?`,
    `What changed recently around ${topic}?`,
    `How would a small team get started with ${topic}?`,
    `Which numbers best describe ${topic}?`,
  ];
  return Array.from({ length: count }, (_, i) => angles[i % angles.length]!);
}

/** A human-readable name for the step that runs `state`. */
export function stepLabel(state: Pick<AgentState, 'phase' | 'index' | 'task' | 'escalated'>): string {
  switch (state.phase) {
    case 'research':
      return `Research ${state.index + 1}/${state.task.researchCalls}`;
    case 'draft':
      return 'Draft';
    case 'decide':
      return state.escalated ? 'Approval (escalated)' : 'Approval';
    case 'publish':
      return 'Publish';
  }
}

export const LIMITS = {
  topicMaxLength: 120,
  researchCallsMax: 6,
} as const;

/** Channel on which the executing worker streams model output and reports model calls. */
export const liveChannelName = (store: StoreKind): string => `taquba-demo:live:${store}`;

export type LiveMessage =
  | { readonly type: 'tokens'; readonly runId: string; readonly stepNumber: number; readonly text: string }
  | { readonly type: 'model-call'; readonly runId: string; readonly stepNumber: number; readonly memoHit: boolean };
