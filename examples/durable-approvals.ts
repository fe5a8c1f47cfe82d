/**
 * durable_approvals: an agent run that stops for a human decision and waits across processes.
 *
 * The agent investigates refund claim 4021 one turn per step (three turns, one finding each),
 * proposes a 75 EUR refund and parks the run on the correlation key `approval:refund-claim-4021`
 * with a timeout. The wait is a scheduled job in the store: this process exits, and the decision
 * arrives in a later invocation.
 *
 *   npm run example:durable-approvals                      start (or resume) the run; exits while it waits
 *   npm run example:durable-approvals -- approve           deliver an approval; the run finishes here
 *   npm run example:durable-approvals -- reject <reason>   deliver a rejection
 *   npm run example:durable-approvals -- clear             discard a decision that is still buffered
 *
 * A decision sent before the first invocation is buffered and consumed when the run starts to
 * wait (it then does not wait at all). A run that waits past its timeout escalates at the next
 * plain invocation. State lives under ./.taquba (TAQUBA_DIR); APPROVAL_TIMEOUT_MS sets the
 * timeout (default 300000).
 */
import { Queue, StepOutcome, WorkflowRuntime, type RunOutcome, type Step } from 'taquba-workflow';
import { FileSystemObjectStore } from 'taquba-workflow/node';

// Text in and out of the runtime's byte payloads.
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const fromUtf8 = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

const ROOT = process.env.TAQUBA_DIR ?? '.taquba';
const TIMEOUT_MS = Number(process.env.APPROVAL_TIMEOUT_MS ?? 300_000);
const RUN_ID = 'refund-claim-4021';
const KEY = `approval:${RUN_ID}`;
const QUEUE = 'approvals';
const REFUND = '75 EUR';

/** The agent's state, carried from step to step in the payload. */
interface AgentState {
  evidence: string[];
  proposal?: string;
}

const FINDINGS = [
  'order 88123 was delivered 9 days late',
  'the customer reported the damage within 24 hours, with photos',
  'no earlier refunds on this account',
];

const decode = (payload: Uint8Array): AgentState => (payload.length === 0 ? { evidence: [] } : (JSON.parse(fromUtf8(payload)) as AgentState));
const encode = (state: AgentState): Uint8Array => utf8(JSON.stringify(state));

async function agentStep(step: Step): Promise<StepOutcome> {
  const state = decode(step.payload);
  if (step.stepNumber < FINDINGS.length) {
    const finding = `[turn ${step.stepNumber}] ${FINDINGS[step.stepNumber]}`;
    console.log(finding);
    state.evidence.push(finding);
    if (step.stepNumber < FINDINGS.length - 1) return StepOutcome.continueNow(encode(state));
    state.proposal = REFUND;
    console.log(`[turn ${step.stepNumber}] proposing a refund of ${REFUND}; awaiting approval`);
    return StepOutcome.continueOnSignal(encode(state), KEY, TIMEOUT_MS);
  }
  // The decision step: woken by a signal, or by the timeout (no signal).
  if (step.signalPayload === null) return StepOutcome.succeed(utf8('escalated: no decision inside the timeout'));
  const decision = fromUtf8(step.signalPayload);
  if (decision !== 'approve') return StepOutcome.succeed(utf8(`refund denied: ${decision}`));
  // Issuing the refund is the side effect that must happen once: the memo guards redeliveries.
  if ((await step.memo.get('refund-issued')) !== null) {
    console.log('refund already recorded by an earlier attempt; not issuing it again');
  } else {
    console.log(`issuing refund of ${state.proposal}`);
    await step.memo.put('refund-issued', utf8(state.proposal ?? REFUND));
  }
  return StepOutcome.succeed(utf8(`refund of ${state.proposal} issued`));
}

const store = new FileSystemObjectStore({ root: ROOT });
const queue = await Queue.open(store, 'examples/durable-approvals', { schedulerIntervalMs: 100 });
let finished!: (o: RunOutcome) => void;
const terminated = new Promise<RunOutcome>((resolve) => (finished = resolve));
const runtime = new WorkflowRuntime(
  queue,
  store,
  agentStep,
  {
    async onTermination(o) {
      console.log(`run ${o.runId} ${o.status}: ${o.result ? fromUtf8(o.result) : (o.error ?? 'cancelled')}`);
      finished(o);
    },
  },
  { queueName: QUEUE, memoPrefix: 'examples/durable-approvals-memo', pollIntervalMs: 100 },
);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves 'terminated' when the run ends, or 'waiting' once only a scheduled job is left (stable). */
async function runUntilWaitingOrDone(): Promise<'terminated' | 'waiting'> {
  const ended = terminated.then(() => 'terminated' as const);
  const waiting = (async () => {
    await sleep(2_000);
    let stable = 0;
    while (stable < 2) {
      const st = await queue.stats(QUEUE);
      stable = st.pending === 0 && st.claimed === 0 && st.scheduled > 0 ? stable + 1 : 0;
      await sleep(150);
    }
    return 'waiting' as const;
  })();
  return Promise.race([ended, waiting]);
}

const [mode, ...rest] = process.argv.slice(2);
const worker = runtime.spawn();
try {
  if (mode === undefined) {
    const submitted = await runtime.submit({ runId: RUN_ID });
    console.log(submitted.newlySubmitted ? `submitted run ${RUN_ID}` : `run ${RUN_ID} already exists; resuming`);
    if ((await runUntilWaitingOrDone()) === 'waiting') {
      console.log(`run ${RUN_ID} is waiting for a decision on ${KEY} (the wait is stored; nothing needs to keep running)`);
      console.log('decide with: npm run example:durable-approvals -- approve | reject <reason>');
    }
  } else if (mode === 'approve' || mode === 'reject') {
    const decision = mode === 'approve' ? 'approve' : rest.join(' ') || 'no reason given';
    const outcome = await runtime.signal(KEY, utf8(decision));
    if (outcome === 'delivered') {
      console.log(`decision delivered to the waiting run: ${decision}`);
      await terminated;
    } else {
      console.log(`decision buffered: no run is waiting on ${KEY}.`);
      console.log('If the run has not reached its approval yet, it consumes the decision when it gets there;');
      console.log('if its wait already timed out, the decision is orphaned (discard it with -- clear).');
    }
  } else if (mode === 'clear') {
    console.log((await runtime.clearSignal(KEY)) ? 'discarded a buffered decision' : 'no buffered decision to discard');
  } else {
    console.log(`unknown mode "${mode}"; use no argument, approve, reject <reason> or clear`);
    process.exitCode = 2;
  }
} finally {
  await worker.shutdown();
  await queue.close();
}
