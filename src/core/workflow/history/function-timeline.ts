/**
 * The function part of a run's timeline: for a run of a workflow function (its step payload is a
 * start's envelope, functions/envelope.ts), which workflow and version it runs and, while it is
 * active, every `ctx` call its history recorded (functions/history.ts), by position: a step by
 * name with its value or failure, a sleep and its end, a signal wait and what arrived. Inspectors
 * show these instead of underlying step numbers, which for a function count its executions (one
 * per sleep or wait), not the workflow's steps.
 *
 * Read from durable records only, like the rest of the timeline: the current step job's payload
 * (the envelope names the workflow and the history generation) and one scan of the history.
 */
import { fromUtf8 } from '../../bytes.js';
import { encodeValue } from '../../codec.js';
import type { JobRecord } from '../../queue/index.js';
import { HEADER_RUN_ID } from '../constants.js';
import { decodeSignalValue } from '../functions/context.js';
import { decodeEnvelope, type Envelope } from '../functions/envelope.js';
import { decodeEvent, historyPrefix, type Event } from '../functions/history.js';
import type { ChildOutcome } from '../functions/children.js';
import { workflowOfHeaders } from '../functions/workflow-run.js';
import type { RunDetails, WorkflowReadSource } from './inspection.js';

/** What a `ctx` call was. */
export type FunctionCallKind = Event['kind'];

/**
 * `done`: a step's value is recorded, a sleep is over, a signal arrived, a child succeeded, a
 * value was drawn; `failed`: a step ran out of attempts, a child failed or was cancelled;
 * `sleeping`: the run waits for this sleep to end; `waiting`: no signal (or child outcome) yet;
 * `timed-out`: the wait ended without a signal.
 */
export type FunctionCallStatus = 'done' | 'failed' | 'sleeping' | 'waiting' | 'timed-out';

/** One `ctx` call of a workflow function's history. */
export interface FunctionCall {
  /** The call's place in the history (0 for the function's first `ctx` call). */
  readonly position: number;
  readonly kind: FunctionCallKind;
  /** The step's or the signal's name, `<workflow> (<child run id>)` for an invoke; empty for sleep, now, random and uuid. */
  readonly name: string;
  readonly status: FunctionCallStatus;
  /** The value in the value codec's encoding (`decodeValue`): a step's result, a signal's value, what now/random/uuid drew; else null. */
  readonly value: Uint8Array | null;
  /** A sleep's end, a signal wait's timeout (epoch ms); else null. */
  readonly untilMs: number | null;
  /** A failed step's last error, else null. */
  readonly error: string | null;
  /** A failed step's attempts, else null. */
  readonly attempts: number | null;
}

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

/** A signal payload as a value-codec encoding: `encodeSignalValue`'s, or raw bytes handed over as text. */
function signalValue(payload: Uint8Array): Uint8Array {
  try {
    return encodeValue(decodeSignalValue(payload));
  } catch {
    return payload;
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

function callOf(position: number, e: Event, sleeping: number | undefined): FunctionCall {
  const base = { position, kind: e.kind, name: e.name, value: null, untilMs: null, error: null, attempts: null };
  switch (e.kind) {
    case 'step':
      return 'failed' in e ? { ...base, status: 'failed', error: e.failed.message, attempts: e.failed.attempts } : { ...base, status: 'done', value: e.value };
    case 'sleep':
      return { ...base, status: position === sleeping ? 'sleeping' : 'done', untilMs: e.untilMs };
    case 'wait':
      if (e.value === undefined) return { ...base, status: 'waiting', untilMs: e.untilMs };
      return e.value === null ? { ...base, status: 'timed-out', untilMs: e.untilMs } : { ...base, status: 'done', untilMs: e.untilMs, value: signalValue(e.value) };
    case 'invoke': {
      // The child's run id shows as the value while it runs; its outcome once it ended.
      const child = { ...base, name: `${e.name} (${e.childRunId})` };
      if (e.value === undefined) return { ...child, status: 'waiting' };
      const outcome = decodeSignalValue(e.value) as ChildOutcome;
      if (outcome.status === 'succeeded') return { ...child, status: 'done', value: outcome.result };
      return { ...child, status: 'failed', error: outcome.error === null ? outcome.status : `${outcome.status}: ${outcome.error}` };
    }
    default:
      return { ...base, status: 'done', value: encodeValue(e.value) };
  }
}

/** The workflow a run's headers name (runs started by `start`), without calls; null for other runs. */
export function namedByHeaders(headers: Readonly<Record<string, string>>): FunctionTimeline | null {
  const workflow = workflowOfHeaders(headers);
  return workflow ? { ...workflow, calls: [] } : null;
}

/** Up to `limit` events of one history generation, by position. */
async function readEvents(source: WorkflowReadSource, prefix: Uint8Array, limit: number): Promise<{ events: Map<number, Event>; truncated: boolean }> {
  const events = new Map<number, Event>();
  let cursor: Uint8Array | undefined;
  do {
    const page = await source.kvScan(prefix, { cursor, limit: Math.min(PAGE, limit - events.size) });
    for (const [key, value] of page.entries) {
      const position = Number(fromUtf8(key.subarray(prefix.length)));
      if (Number.isSafeInteger(position)) events.set(position, decodeEvent(value, fromUtf8(key)));
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined && events.size < limit);
  return { events, truncated: cursor !== undefined };
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
  const { events, truncated } = await readEvents(source, historyPrefix(queueName, runId, gen), limit);
  const sleeping = sleepingAt(events, active);
  const calls = [...events].sort(([a], [b]) => a - b).map(([position, e]) => callOf(position, e, sleeping));
  return { timeline: { name: envelope.name, version: envelope.version, calls }, truncated };
}
