/**
 * Where the runtime keeps its state. One file, so the layout can be read in one place.
 *
 * Caller KV (all under the reserved `workflow/` prefix):
 *   workflow/runs/{run}                    run record (input hash, submit time)
 *   workflow/steps/{run}                   step pointer {step, job id}: the run's job, and the step it
 *                                          was enqueued for (a job continued in place carries its
 *                                          current step in its headers, and keeps the pointer)
 *   workflow/terminals/{ts:020}/{run}      terminal marker (memo retention only), empty value
 *   workflow/outcomes/{q}/{run}            finished-run record (outcome retention only)
 *   workflow/ended/{q}/{ts:020}/{run}      its retention index entry, empty value
 *   workflow/signal-wait/{key}             job id of the scheduled waiter of a correlation key
 *   workflow/signal-buf/{key}              the one buffered signal of a correlation key
 *   workflow/signal-delivered/{run}/{step} signal consumed on behalf of a step
 *   workflow/flow/{q}/slots/{k}            a concurrency key's state (active, limit, waiting, next seq)
 *   workflow/flow/{q}/queued/{k}/{seq:016} a run waiting for a slot of key k (its step-0 job to be)
 *   workflow/flow/{q}/input/{run}/{i:04}   chunk i of a large input of a waiting run
 *   workflow/flow/{q}/rate/{k}             the last starts of a rate-limit key
 *   workflow/flow/{q}/debounce/{k}         the open debounce window of a key (its run and step-0 job)
 *
 * `{k}` is a flow-control key, URI-encoded (flow/flow-options.ts checks it encodes).
 *   workflow/moved/{q}/{run}               where a handed-off run went (archive/moved-runs.ts)
 *   workflow/imports/{archive}             the run an archive was imported as (archive/import-run.ts)
 *
 * `{q}` is the runtime's queue name, URI-encoded so it holds no `/`: runtimes sharing a queue
 * handle keep their finished runs apart, and each sweeps its own with its own window.
 *
 * Object store (`p` = memo prefix; user keys and payloads hashed with SHA-256, lowercase hex):
 *   p/memos/{run}/{step}/{hex}             per-step memo entry
 *   p/memos/{run}/run/{hex}                run-scoped memo entry
 *   p/step-outputs/{run}/{step}/{hex}      step-output replay record
 *   p/memos/{run}/handoff/{archive}        the archive a hand-off moved the run with (swept with the memos)
 */
import { fromUtf8, utf8 } from '../bytes.js';

export const RUNS_PREFIX = 'workflow/runs/';
const STEPS_PREFIX = 'workflow/steps/';
export const TERMINALS_PREFIX = 'workflow/terminals/';
const OUTCOMES_PREFIX = 'workflow/outcomes/';
const ENDED_PREFIX = 'workflow/ended/';
const SIGNAL_WAIT_PREFIX = 'workflow/signal-wait/';
const SIGNAL_BUF_PREFIX = 'workflow/signal-buf/';
const SIGNAL_DELIVERED_PREFIX = 'workflow/signal-delivered/';
const FLOW_PREFIX = 'workflow/flow/';

/** Width of the zero-padded timestamp in marker keys, so keys sort oldest first. */
const TS_WIDTH = 20;

export const runRecordKey = (runId: string): Uint8Array => utf8(RUNS_PREFIX + runId);
export const stepPointerKey = (runId: string): Uint8Array => utf8(STEPS_PREFIX + runId);
export const signalWaitKey = (correlationKey: string): Uint8Array => utf8(SIGNAL_WAIT_PREFIX + correlationKey);
export const signalBufferKey = (correlationKey: string): Uint8Array => utf8(SIGNAL_BUF_PREFIX + correlationKey);
export const signalDeliveredKey = (runId: string, step: number): Uint8Array => utf8(`${SIGNAL_DELIVERED_PREFIX}${runId}/${step}`);

/** The terminal marker key of a run that terminated at `terminatedAtMs`. */
export function terminalMarkerKey(terminatedAtMs: number, runId: string): Uint8Array {
  return utf8(`${TERMINALS_PREFIX}${String(Math.max(0, Math.floor(terminatedAtMs))).padStart(TS_WIDTH, '0')}/${runId}`);
}

/** Parses a marker key back; undefined when it does not have the marker shape. */
export function parseTerminalMarkerKey(key: Uint8Array): { terminatedAtMs: number; runId: string } | undefined {
  let text: string;
  try {
    text = fromUtf8(key);
  } catch {
    return undefined;
  }
  if (!text.startsWith(TERMINALS_PREFIX)) return undefined;
  const parsed = parseStampedName(text.slice(TERMINALS_PREFIX.length));
  return parsed && { terminatedAtMs: parsed.endedAtMs, runId: parsed.runId };
}

/** A queue name as one key segment (URI-encoded: it holds no `/`). */
export const queueSegment = (queueName: string): string => encodeURIComponent(queueName);

/** Prefix of the finished-run records of the runtime on `queueName` (listed in run-id order). */
export const finishedRunPrefix = (queueName: string): Uint8Array => utf8(`${OUTCOMES_PREFIX}${queueSegment(queueName)}/`);
export const finishedRunKey = (queueName: string, runId: string): Uint8Array => utf8(`${OUTCOMES_PREFIX}${queueSegment(queueName)}/${runId}`);

/** Prefix of the retention index of the runtime on `queueName` (oldest ending first). */
export const endedIndexPrefix = (queueName: string): Uint8Array => utf8(`${ENDED_PREFIX}${queueSegment(queueName)}/`);

/** The retention index entry of a run of `queueName` that ended at `endedAtMs`. */
export function endedIndexKey(queueName: string, endedAtMs: number, runId: string): Uint8Array {
  return utf8(`${ENDED_PREFIX}${queueSegment(queueName)}/${String(Math.max(0, Math.floor(endedAtMs))).padStart(TS_WIDTH, '0')}/${runId}`);
}

/** Parses an index entry of `queueName` back; undefined when it does not have the entry shape. */
export function parseEndedIndexKey(queueName: string, key: Uint8Array): { endedAtMs: number; runId: string } | undefined {
  let text: string;
  try {
    text = fromUtf8(key);
  } catch {
    return undefined;
  }
  const prefix = `${ENDED_PREFIX}${queueSegment(queueName)}/`;
  if (!text.startsWith(prefix)) return undefined;
  return parseStampedName(text.slice(prefix.length));
}

/** `{ts:020}/{run}` → its parts; undefined for another shape. */
function parseStampedName(rest: string): { endedAtMs: number; runId: string } | undefined {
  const slash = rest.indexOf('/');
  if (slash !== TS_WIDTH || !/^[0-9]+$/.test(rest.slice(0, slash))) return undefined;
  const endedAtMs = Number(rest.slice(0, slash));
  if (!Number.isSafeInteger(endedAtMs)) return undefined;
  return { endedAtMs, runId: rest.slice(slash + 1) };
}

const flowSegment = (key: string): string => encodeURIComponent(key);
/** Width of the zero-padded sequence number of a waiting run, so the list reads in arrival order. */
const SEQ_WIDTH = 16;

export const flowSlotsKey = (queueName: string, key: string): Uint8Array => utf8(`${FLOW_PREFIX}${queueSegment(queueName)}/slots/${flowSegment(key)}`);
/** Prefix of the runs waiting for a slot of `key`, oldest first. */
export const flowQueuedPrefix = (queueName: string, key: string): Uint8Array => utf8(`${FLOW_PREFIX}${queueSegment(queueName)}/queued/${flowSegment(key)}/`);
export const flowQueuedKey = (queueName: string, key: string, seq: number): Uint8Array =>
  utf8(`${FLOW_PREFIX}${queueSegment(queueName)}/queued/${flowSegment(key)}/${String(seq).padStart(SEQ_WIDTH, '0')}`);
export const flowInputChunkKey = (queueName: string, runId: string, index: number): Uint8Array =>
  utf8(`${FLOW_PREFIX}${queueSegment(queueName)}/input/${runId}/${String(index).padStart(4, '0')}`);
export const flowRateKey = (queueName: string, key: string): Uint8Array => utf8(`${FLOW_PREFIX}${queueSegment(queueName)}/rate/${flowSegment(key)}`);
export const flowDebounceKey = (queueName: string, key: string): Uint8Array => utf8(`${FLOW_PREFIX}${queueSegment(queueName)}/debounce/${flowSegment(key)}`);

/** Dedup key of step `step` of a run: at most one such job waits at a time. */
export const stepDedupKey = (runId: string, step: number): string => `run:${runId}:${step}`;
/** Dedup key of a run's terminal notification. */
export const terminalDedupKey = (runId: string): string => `run:${runId}:terminal`;

export const memoRunPrefix = (prefix: string, runId: string): string => `${prefix}/memos/${runId}/`;
export const stepOutputRunPrefix = (prefix: string, runId: string): string => `${prefix}/step-outputs/${runId}/`;
export const memoObjectKey = (prefix: string, runId: string, scope: number | 'run', hashHex: string): string => `${prefix}/memos/${runId}/${scope}/${hashHex}`;

/** The scope and key hash of a memo object listed under `memoRunPrefix` (the part after it); undefined for anything else. */
export function parseMemoObjectName(name: string): { readonly scope: number | 'run'; readonly keyHash: string } | undefined {
  const [scopeText, keyHash, ...rest] = name.split('/');
  const scope = scopeText === 'run' ? 'run' : Number(scopeText);
  if (keyHash === undefined || rest.length > 0 || (scope !== 'run' && !Number.isSafeInteger(scope))) return undefined;
  return { scope, keyHash };
}
export const stepOutputObjectKey = (prefix: string, runId: string, step: number, payloadHashHex: string): string =>
  `${prefix}/step-outputs/${runId}/${step}/${payloadHashHex}`;

const MOVED_PREFIX = 'workflow/moved/';
const IMPORTS_PREFIX = 'workflow/imports/';

/** Prefix of the moved-run records of the runtime on `queueName` (listed in run-id order). */
export const movedRunPrefix = (queueName: string): Uint8Array => utf8(`${MOVED_PREFIX}${queueSegment(queueName)}/`);
/** Where run `runId` of the runtime on `queueName` went when it was handed off. */
export const movedRunKey = (queueName: string, runId: string): Uint8Array => utf8(`${MOVED_PREFIX}${queueSegment(queueName)}/${runId}`);
/** The import of archive `archiveId` into this store (its idempotency record). */
export const archiveImportKey = (archiveId: string): Uint8Array => utf8(`${IMPORTS_PREFIX}${archiveId}`);
/** The archive kept in the source by the hand-off of `runId` (a memo-scope name no memo uses). */
export const handOffObjectKey = (prefix: string, runId: string, archiveId: string): string => `${prefix}/memos/${runId}/handoff/${archiveId}`;
