/**
 * The function part of a run's timeline: for a run of a workflow function (its step payload is a
 * start's envelope, functions/envelope.ts), which workflow and version it runs and, while it is
 * active, every `ctx` call its history recorded (functions/history.ts), by position: a step by
 * name with its value or failure and its retried attempts, a sleep and its end, a signal wait
 * and what arrived. Inspectors show these instead of underlying step numbers, which for a
 * function count its executions (one per sleep or wait), not the workflow's steps.
 *
 * Read from durable records only, like the rest of the timeline: the current step job's payload
 * (the envelope names the workflow and the history generation) and one scan of the history.
 */
import type { JobRecord } from '../../queue/index.js';
import { HEADER_RUN_ID } from '../constants.js';
import { callOf, retryingCall, type FunctionCall } from '../functions/calls.js';
import { decodeEnvelope, type Envelope } from '../functions/envelope.js';
import { addEntry, emptyHistory, historyPrefix, type Event, type History } from '../functions/history.js';
import { workflowOfHeaders } from '../functions/workflow-run.js';
import type { RunDetails, WorkflowReadSource } from './inspection.js';

/** A workflow function's run: its definition and, while it is active, its history. */
export interface FunctionTimeline {
  readonly name: string;
  readonly version: number;
  /** The history's calls in position order. Empty once the run ended: its ending deletes its history. */
  readonly calls: readonly FunctionCall[];
}

const PAGE = 500;

function envelopeOf(job: JobRecord | undefined): Envelope | undefined {
  if (job === undefined || job.payloadError !== undefined) return undefined;
  try {
    return decodeEnvelope(job.payload, job.headers[HEADER_RUN_ID] ?? job.id);
  } catch {
    // Not a workflow function's step (a StepRunner run): the timeline keeps its step numbers.
    return undefined;
  }
}

/** The position of the sleep the active run waits for: the last one ending by its step's timer. */
function sleepingAt(events: ReadonlyMap<number, Event>, active: RunDetails): number | undefined {
  const wait = active.waitingFor;
  if (wait?.type !== 'timer' || wait.reason !== 'delay') return undefined;
  let found: number | undefined;
  // The timer is set from the sleep's end, so it is never earlier than it.
  for (const [position, e] of events) if (e.kind === 'sleep' && e.untilMs <= wait.at && (found === undefined || position > found)) found = position;
  return found;
}

/** The workflow a run's headers name (runs started by `start`), without calls; null for other runs. */
export function namedByHeaders(headers: Readonly<Record<string, string>>): FunctionTimeline | null {
  const workflow = workflowOfHeaders(headers);
  return workflow ? { ...workflow, calls: [] } : null;
}

/** Up to `limit` entries of one history generation. */
async function readHistory(source: WorkflowReadSource, prefix: Uint8Array, limit: number): Promise<{ history: History; truncated: boolean }> {
  const history = emptyHistory();
  let cursor: Uint8Array | undefined;
  let read = 0;
  do {
    const page = await source.kvScan(prefix, { cursor, limit: Math.min(PAGE, limit - read) });
    read += page.entries.length;
    for (const [key, value] of page.entries) addEntry(history, key, prefix.length, value);
    cursor = page.nextCursor;
  } while (cursor !== undefined && read < limit);
  return { history, truncated: cursor !== undefined };
}

/** The history's calls in position order: each recorded event, and the steps that only failed attempts so far. */
function callsOf({ events, failures }: History, sleeping: number | undefined): FunctionCall[] {
  const positions = [...new Set([...events.keys(), ...failures.keys()])].sort((a, b) => a - b);
  return positions.map((position) => {
    const event = events.get(position);
    const failed = failures.get(position) ?? [];
    return event === undefined ? retryingCall(position, failed) : callOf(position, event, position === sleeping, failed);
  });
}

/**
 * The function part of run `runId`'s timeline, or null when the run is not a workflow function's
 * (or nothing of it is kept). `active` is the run's active record; `jobs` are its kept step jobs,
 * newest first (an ended run is named from them, without calls). At most `limit` calls are read.
 * Rejects with CORRUPT_DATA for an undecodable history event, CLOSED or STORE_*.
 */
export async function readFunctionTimeline(
  source: WorkflowReadSource,
  queueName: string,
  runId: string,
  active: RunDetails | null,
  jobs: readonly JobRecord[],
  limit: number,
): Promise<{ timeline: FunctionTimeline | null; truncated: boolean }> {
  if (active === null) {
    const envelope = jobs.map(envelopeOf).find((e) => e !== undefined);
    return { timeline: envelope ? { name: envelope.name, version: envelope.version, calls: [] } : null, truncated: false };
  }
  const job = jobs.find((j) => j.id === active.jobId) ?? (await source.getJob(active.jobId));
  const envelope = envelopeOf(job);
  if (envelope === undefined) return { timeline: null, truncated: false };
  // Step 0 carries no generation: it is that step's job id (function-runner.ts).
  const gen = envelope.gen ?? (active.currentStep === 0 ? active.jobId : undefined);
  if (gen === undefined) return { timeline: { name: envelope.name, version: envelope.version, calls: [] }, truncated: false };
  const { history, truncated } = await readHistory(source, historyPrefix(queueName, runId, gen), limit);
  const calls = callsOf(history, sleepingAt(history.events, active));
  return { timeline: { name: envelope.name, version: envelope.version, calls }, truncated };
}
