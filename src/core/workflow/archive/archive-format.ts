/**
 * The run archive's bytes (docs/rfcs/0004-run-archive.md): one versioned, checksummed object that
 * carries everything a run needs to continue in another store.
 *
 * Layout (big-endian):
 *
 *   offset 0   magic "TQRA" (u32)
 *          4   format version (u16)
 *          6   CRC-32C of bytes 0..5 (u32)      <- these 10 bytes are the same in every version
 *         10   body length (u32)
 *         14   SHA-256 of the body (32 bytes)
 *         46   body: a MessagePack kind record { kind: 'taquba-run-archive', format, body: {...} }
 *
 * The header CRC makes a flipped version bit read as damage (CORRUPT_DATA), never as "a newer
 * format"; only an intact header of a higher version is refused as one (INVALID_ARGUMENT, reason
 * `archive_version`, naming both versions). Everything after the header belongs to its version.
 * Archives travel across networks and disks, so the body has a SHA-256, not the CRC-32C of the
 * objects a store keeps.
 */
import { crc32c } from '../../checksum.js';
import { CorruptDataError, InvalidArgumentError } from '../../errors.js';
import { sha256 } from '../../hash.js';
import { decodeKindRecord, encodeKindRecord } from '../../kind-records.js';
import { equalBytes } from '../../bytes.js';

/** The format version this library writes and the newest it reads. */
export const RUN_ARCHIVE_FORMAT_VERSION = 1;

const MAGIC = 0x54515241; // "TQRA"
const KIND = 'taquba-run-archive';
const HEADER_BYTES = 10;
const BODY_START = HEADER_BYTES + 4 + 32;

/** A run's current step job, as the archive keeps it. */
export interface ArchivedStep {
  readonly number: number;
  /** The job that carried it in the source (a workflow function's history generation when its payload names none). */
  readonly jobId: string;
  readonly payload: Uint8Array;
  /** The run's own headers (the reserved `workflow.` ones are rebuilt on import). */
  readonly headers: Readonly<Record<string, string>>;
  /** The correlation key the step waits on (`workflow.signal_wait`), or null. */
  readonly signalWait: string | null;
  /** Whether a signal was consumed for the step at registration (`workflow.signal_delivered`). */
  readonly signalDelivered: boolean;
  readonly priority: number;
  readonly maxAttempts: number;
  /** Tries made of this step (an in-flight try of a copied running step is given back). */
  readonly attempts: number;
  readonly interruptions: number;
  /** When a scheduled step becomes due (a delay, a retry backoff, a signal timeout); null when it was claimable. */
  readonly runAt: number | null;
  /** A signal waiter woken by a signal: when, and the signal's payload. */
  readonly woken: { readonly atMs: number; readonly payload: Uint8Array | null } | null;
  readonly lastError: string | null;
  /** Whether the job had its step's dedup key (step 0 does). */
  readonly deduplicated: boolean;
}

/** Bytes under a name relative to the run (a caller-KV key tail or an object path tail). */
export type ArchivedEntry = readonly [string, Uint8Array];

export interface RunArchive {
  readonly archiveId: string;
  readonly exportedAtMs: number;
  /** A hand-off: the source marked the run moved. Imports under the source's run id by default. */
  readonly handOff: boolean;
  /** The destination the hand-off named, or null. */
  readonly to: string | null;
  readonly source: { readonly queueName: string; readonly runId: string };
  /** `function`: a workflow function's run (its step payload is an envelope); `steps`: a StepRunner's. */
  readonly kind: 'steps' | 'function';
  readonly run: { readonly submittedAtMs: number; readonly inputHash: Uint8Array };
  readonly step: ArchivedStep;
  /** The function history, keys relative to `workflow/fn/{q}/{run}/` (`{gen}/{position}[/{attempt}]`). */
  readonly history: readonly ArchivedEntry[];
  /** Buffered signals for the run: [correlation key, payload]. */
  readonly signals: readonly ArchivedEntry[];
  /** The signal consumed for the current step (`signal-delivered/{run}/{step}`), or null. */
  readonly delivered: Uint8Array | null;
  /** Memo objects (sealed, as stored), paths relative to `{prefix}/memos/{run}/`. */
  readonly memos: readonly ArchivedEntry[];
  /** Step-output replay objects, paths relative to `{prefix}/step-outputs/{run}/`. */
  readonly stepOutputs: readonly ArchivedEntry[];
  /** The caller-KV entries the export named (`kvKeys`) that existed. */
  readonly kv: readonly (readonly [Uint8Array, Uint8Array])[];
}

function damaged(problem: string, facts: Record<string, string | number> = {}, cause?: unknown): CorruptDataError {
  let message = `run archive is damaged. problem=${problem}`;
  for (const [k, v] of Object.entries(facts)) message += ` ${k}=${String(v)}`;
  return new CorruptDataError(message, { reason: 'damaged_archive', problem, ...facts }, cause);
}

export async function encodeRunArchive(archive: RunArchive): Promise<Uint8Array> {
  const { step, run, source } = archive;
  const body = encodeKindRecord(KIND, RUN_ARCHIVE_FORMAT_VERSION, {
    archiveId: archive.archiveId,
    exportedAtMs: archive.exportedAtMs,
    handOff: archive.handOff,
    to: archive.to,
    source: { queueName: source.queueName, runId: source.runId },
    kind: archive.kind,
    run: { submittedAtMs: run.submittedAtMs, inputHash: run.inputHash },
    step: { ...step, headers: { ...step.headers }, woken: step.woken === null ? null : { atMs: step.woken.atMs, payload: step.woken.payload } },
    history: archive.history,
    signals: archive.signals,
    delivered: archive.delivered,
    memos: archive.memos,
    stepOutputs: archive.stepOutputs,
    kv: archive.kv,
  });
  const out = new Uint8Array(BODY_START + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC);
  view.setUint16(4, RUN_ARCHIVE_FORMAT_VERSION);
  view.setUint32(6, crc32c(out, 0, 6));
  view.setUint32(HEADER_BYTES, body.length);
  out.set(await sha256(body), HEADER_BYTES + 4);
  out.set(body, BODY_START);
  return out;
}

/**
 * The archive in `bytes`. CORRUPT_DATA (reason `damaged_archive`, `problem` saying what) for bytes
 * that are not an intact archive (truncated, bit-flipped, not an archive at all); INVALID_ARGUMENT
 * (reason `archive_version`, `version` and `supported`) for an archive of a newer format.
 */
export async function decodeRunArchive(bytes: Uint8Array): Promise<RunArchive> {
  if (!(bytes instanceof Uint8Array)) throw new InvalidArgumentError('a run archive is a Uint8Array', { reason: 'invalid_archive' });
  if (bytes.length < HEADER_BYTES) throw damaged('shorter than the header', { size: bytes.length });
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (crc32c(bytes, 0, 6) !== view.getUint32(6)) throw damaged('header checksum mismatch');
  if (view.getUint32(0) !== MAGIC) throw damaged('not a run archive (wrong magic)');
  const version = view.getUint16(4);
  if (version > RUN_ARCHIVE_FORMAT_VERSION) {
    throw new InvalidArgumentError(`run archive format ${version} is newer than this library reads (format ${RUN_ARCHIVE_FORMAT_VERSION}); import it with a newer taquba-workflow`, {
      reason: 'archive_version',
      version,
      supported: RUN_ARCHIVE_FORMAT_VERSION,
    });
  }
  if (version !== RUN_ARCHIVE_FORMAT_VERSION) throw damaged('unknown format version', { version });
  if (bytes.length < BODY_START) throw damaged('shorter than the frame', { size: bytes.length });
  const length = view.getUint32(HEADER_BYTES);
  if (length !== bytes.length - BODY_START) throw damaged('length mismatch', { body_length: length, size: bytes.length });
  const body = bytes.subarray(BODY_START);
  if (!equalBytes(await sha256(body), bytes.subarray(HEADER_BYTES + 4, BODY_START))) throw damaged('checksum mismatch');
  let fields: Record<string, unknown>;
  try {
    fields = decodeKindRecord(body, 'run archive', KIND, RUN_ARCHIVE_FORMAT_VERSION, 'run archive');
  } catch (e) {
    throw damaged('body does not decode', {}, e);
  }
  return readBody(fields);
}

/** Field checks of a body that passed its checksum (so a failure is a writer's bug or a forgery). */
function readBody(m: Record<string, unknown>): RunArchive {
  const bad = (field: string): CorruptDataError => damaged('malformed field', { field });
  const str = (o: Record<string, unknown>, f: string, path = f): string => {
    if (typeof o[f] !== 'string') throw bad(path);
    return o[f];
  };
  const count = (o: Record<string, unknown>, f: string, path = f): number => {
    const v = o[f];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw bad(path);
    return v;
  };
  const bytesOf = (o: Record<string, unknown>, f: string, path = f): Uint8Array => {
    if (!(o[f] instanceof Uint8Array)) throw bad(path);
    return o[f];
  };
  const map = (v: unknown, path: string): Record<string, unknown> => {
    if (typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof Uint8Array) throw bad(path);
    return v as Record<string, unknown>;
  };
  const entries = <K extends string | Uint8Array>(f: string, isKey: (k: unknown) => k is K): (readonly [K, Uint8Array])[] => {
    const list = m[f];
    if (!Array.isArray(list)) throw bad(f);
    return list.map((pair: unknown) => {
      if (!Array.isArray(pair) || pair.length !== 2 || !isKey(pair[0]) || !(pair[1] instanceof Uint8Array)) throw bad(f);
      return [pair[0], pair[1]] as const;
    });
  };
  const isString = (k: unknown): k is string => typeof k === 'string';
  const isBytes = (k: unknown): k is Uint8Array => k instanceof Uint8Array;
  const source = map(m.source, 'source');
  const run = map(m.run, 'run');
  const s = map(m.step, 'step');
  const headers = map(s.headers, 'step.headers');
  if (Object.values(headers).some((v) => typeof v !== 'string')) throw bad('step.headers');
  const kind = m.kind;
  if (kind !== 'steps' && kind !== 'function') throw bad('kind');
  if (typeof m.handOff !== 'boolean') throw bad('handOff');
  if (m.to !== null && typeof m.to !== 'string') throw bad('to');
  const nullable = <T>(v: unknown, check: (v: unknown) => v is T, path: string): T | null => {
    if (v === null || v === undefined) return null;
    if (!check(v)) throw bad(path);
    return v;
  };
  const wokenMap = s.woken === null || s.woken === undefined ? null : map(s.woken, 'step.woken');
  const priority = s.priority;
  if (typeof priority !== 'number' || !Number.isSafeInteger(priority)) throw bad('step.priority');
  if (typeof s.signalDelivered !== 'boolean') throw bad('step.signalDelivered');
  if (typeof s.deduplicated !== 'boolean') throw bad('step.deduplicated');
  const runAt = s.runAt === null || s.runAt === undefined ? null : count(s, 'runAt', 'step.runAt');
  const inputHash = bytesOf(run, 'inputHash', 'run.inputHash');
  if (inputHash.length !== 32) throw bad('run.inputHash');
  return {
    archiveId: str(m, 'archiveId'),
    exportedAtMs: count(m, 'exportedAtMs'),
    handOff: m.handOff,
    to: m.to as string | null,
    source: { queueName: str(source, 'queueName', 'source.queueName'), runId: str(source, 'runId', 'source.runId') },
    kind,
    run: { submittedAtMs: count(run, 'submittedAtMs', 'run.submittedAtMs'), inputHash },
    step: {
      number: count(s, 'number', 'step.number'),
      jobId: str(s, 'jobId', 'step.jobId'),
      payload: bytesOf(s, 'payload', 'step.payload'),
      headers: headers as Record<string, string>,
      signalWait: nullable(s.signalWait, isString, 'step.signalWait'),
      signalDelivered: s.signalDelivered,
      priority,
      maxAttempts: count(s, 'maxAttempts', 'step.maxAttempts'),
      attempts: count(s, 'attempts', 'step.attempts'),
      interruptions: count(s, 'interruptions', 'step.interruptions'),
      runAt,
      woken: wokenMap === null ? null : { atMs: count(wokenMap, 'atMs', 'step.woken.atMs'), payload: nullable(wokenMap.payload, isBytes, 'step.woken.payload') },
      lastError: nullable(s.lastError, isString, 'step.lastError'),
      deduplicated: s.deduplicated,
    },
    history: entries('history', isString),
    signals: entries('signals', isString),
    delivered: nullable(m.delivered, isBytes, 'delivered'),
    memos: entries('memos', isString),
    stepOutputs: entries('stepOutputs', isString),
    kv: entries('kv', isBytes),
  };
}

/** What an archive holds, for tools that show one before importing it (`taquba import`). */
export interface RunArchiveSummary {
  readonly archiveId: string;
  readonly formatVersion: number;
  readonly exportedAtMs: number;
  readonly handOff: boolean;
  readonly to: string | null;
  readonly runId: string;
  readonly queueName: string;
  readonly kind: 'steps' | 'function';
  readonly step: number;
  /** `waiting-for-signal`, `scheduled` (a delay or a backoff, until `runAt`) or `pending`. */
  readonly state: 'pending' | 'scheduled' | 'waiting-for-signal';
  readonly runAt: number | null;
  readonly historyEntries: number;
  readonly memoEntries: number;
  readonly kvEntries: number;
}

/** The summary of the archive in `bytes`; the errors of `importRun` for damaged or newer archives. */
export async function describeRunArchive(bytes: Uint8Array): Promise<RunArchiveSummary> {
  return summarize(await decodeRunArchive(bytes));
}

export function summarize(a: RunArchive): RunArchiveSummary {
  const waiting = a.step.runAt !== null;
  return {
    archiveId: a.archiveId,
    formatVersion: RUN_ARCHIVE_FORMAT_VERSION,
    exportedAtMs: a.exportedAtMs,
    handOff: a.handOff,
    to: a.to,
    runId: a.source.runId,
    queueName: a.source.queueName,
    kind: a.kind,
    step: a.step.number,
    state: waiting && a.step.signalWait !== null && a.step.woken === null ? 'waiting-for-signal' : waiting ? 'scheduled' : 'pending',
    runAt: a.step.runAt,
    historyEntries: a.history.length,
    memoEntries: a.memos.length,
    kvEntries: a.kv.length,
  };
}
