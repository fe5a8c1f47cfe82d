/**
 * What the page and the agent's worker agree on: the task a person starts, the names of the
 * workflow's steps and signals, the decisions sent to it, what it returns, and the messages the
 * executing worker streams to every tab. Plain data, the same on both sides of the worker boundary.
 */

/** The stores the demo can run on; both live in this browser's origin. */
export type StoreKind = 'indexeddb' | 'opfs';

/** Name of the runtime's store (and of its Web Lock and BroadcastChannel). */
export const STORE_NAME = 'agent-demo';

/** What the user asks for when starting a task: the workflow's input. */
export interface TaskSpec {
  readonly topic: string;
  /** Research model calls, one step each. */
  readonly researchCalls: number;
  /** How long the run waits for a decision before escalating (and then as long again before it gives up). */
  readonly approvalTimeoutMs: number;
  /** Delay of the simulated model between words. */
  readonly tokenDelayMs: number;
  /** The second research call is rate limited on its first attempt (the step retries it after a backoff). */
  readonly flaky: boolean;
  /** Every research call fails until the person presses Retry: the step runs out of attempts. */
  readonly outage: boolean;
}

/** The steps of the workflow, by the names `ctx.step` records (and the inspector shows). */
export const STEPS = {
  research: (index: number): string => `research ${index + 1}`,
  draft: 'draft',
  escalate: 'escalate',
  publish: 'publish',
} as const;

/** The signals the run waits for (`client.signal(runId, name, value)`). */
export const SIGNALS = {
  /** A `Decision` on the draft. */
  approve: 'approve',
  /** A `RetryDecision` after a research step ran out of attempts. */
  retry: 'retry',
} as const;

/** The decision a person sends as the `approve` signal. */
export interface Decision {
  readonly decision: 'approve' | 'reject';
  readonly reason: string;
}

/** What a person sends as the `retry` signal: run the failed step again (the simulated outage is over), or fail the run. */
export type RetryDecision = 'retry' | 'give-up';

/** What a succeeded run returns. */
export interface AgentResult {
  /** The published brief, Markdown. */
  readonly article: string;
  readonly draft: string;
  readonly notes: readonly string[];
}

/** Attempts of a model step (`retries: 4`) and the backoff before each retry, as the workflow sets them. */
export const MODEL_STEP_POLICY = { attempts: 5, backoff: { initialMs: 500, factor: 2, maxMs: 4_000 } } as const;

/** A running attempt's "last seen" time is saved this often: one cut off ran at most this much longer. */
export const HEARTBEAT_MS = 500;

/** The delay the step waits before attempt `attempt + 1` (the library's exponential backoff with the policy above). */
export function retryDelayAfter(attempt: number): number {
  const { initialMs, factor, maxMs } = MODEL_STEP_POLICY.backoff;
  return Math.min(maxMs, initialMs * factor ** (attempt - 1));
}

/** The research questions of a topic, in order (deterministic: a replay asks the same). */
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

/** A step's name for a person: `research 2 of 3`, `draft`, ... */
export function stepLabel(step: string, researchCalls: number | null): string {
  return researchCalls !== null && /^research \d+$/.test(step) ? `${step} of ${researchCalls}` : step;
}

export const LIMITS = {
  topicMaxLength: 120,
  researchCallsMax: 6,
} as const;

/** Channel on which the executing worker streams model output and says when its logs changed. */
export const liveChannelName = (store: StoreKind): string => `taquba-demo:live:${store}`;

export type LiveMessage =
  /** The text a step's model call produced so far. */
  | { readonly type: 'tokens'; readonly runId: string; readonly step: string; readonly text: string }
  /** An attempt started or ended, or a model call was logged: re-read the demo's logs. */
  | { readonly type: 'log'; readonly runId: string };

/** The host id of the demo's Node backend (`npm run demo:server`): the attempts it logs carry it. */
export const SERVER_HOST = 'server';

/**
 * Where the demo's Node backend logs what the page logs in its own database (demo-db.ts) for the
 * steps it runs: caller-KV keys of its store, which the page reads over HTTP (`server.kvScan`).
 * Values are JSON of the page's records without their `store`.
 */
export const SERVER_LOG = {
  attempts: (runId: string): string => `demo/attempts/${runId}/`,
  modelCalls: (runId: string): string => `demo/model-calls/${runId}/`,
} as const;
