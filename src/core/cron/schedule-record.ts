/**
 * How a schedule is stored: one caller-KV record per schedule, under the runtime's reserved
 * `workflow/` prefix (so no step's KV effects can touch it):
 *
 *   workflow/cron/schedules/{name}   MessagePack { v: 1, name, cron, tz, target, defined, next, last?, lastId?, d?, op? }
 *
 * `target` is everything a firing needs, as data (a workflow start is stored as the run input
 * `runtime.start` would submit), so any process holding the writer fires it without the caller's
 * code, and a reader in another process lists it. `next` is the recorded next firing: when it is
 * overdue after a gap, it is the one firing made up for (no backfill).
 */
import { equalBytes, fromUtf8, utf8 } from '../bytes.js';
import { decodeRecord, encodeRecord } from '../codec.js';
import { CorruptDataError } from '../errors.js';

export const SCHEDULES_PREFIX = 'workflow/cron/schedules/';
const FORMAT = 1;

export const scheduleKey = (name: string): Uint8Array => utf8(SCHEDULES_PREFIX + name);

/** What a firing does, as stored. */
export type ScheduleTargetInfo =
  /** A workflow function's start (`runtime.start`): `input` is the start's run input; `workflow` is `name@version`. */
  | { readonly type: 'start'; readonly queueName: string; readonly workflow: string; readonly input: Uint8Array; readonly options: ScheduleTargetOptions }
  /** A plain run (`runtime.submit`). */
  | { readonly type: 'submit'; readonly queueName: string; readonly input: Uint8Array; readonly options: ScheduleTargetOptions }
  /** A typed job (`JobRunner`): `input` is the job's run input (its envelope). */
  | { readonly type: 'job'; readonly queueName: string; readonly job: string; readonly input: Uint8Array; readonly options: ScheduleTargetOptions }
  /** A plain queue job (`queue.enqueue`) on queue `queueName`. */
  | { readonly type: 'enqueue'; readonly queueName: string; readonly input: Uint8Array; readonly options: ScheduleTargetOptions };

/** The options every firing of a target carries. */
export interface ScheduleTargetOptions {
  readonly headers: Readonly<Record<string, string>>;
  readonly priority?: number;
  readonly maxAttempts?: number;
}

export interface ScheduleInfo {
  readonly name: string;
  readonly cron: string;
  readonly timezone: string;
  readonly target: ScheduleTargetInfo;
  readonly definedAtMs: number;
  /** The next firing, epoch ms (overdue when the writer was away). */
  readonly nextFireMs: number;
  /** The last firing made, and the job or run id it enqueued. */
  readonly lastFireMs?: number;
  readonly lastFireId?: string;
  /**
   * True when a host's (or a scheduler's) `schedules` list wrote it: a host deletes such a
   * schedule once its list no longer has it. Absent for one made with `define` or `replace`.
   */
  readonly declared?: boolean;
  /**
   * True when a schedule operation wrote it (`addSchedule` / `replaceSchedule`: from another
   * process, a tab, an HTTP client or `taquba schedules add`). Like one made with `define`, no
   * declared list ever deletes it; a declaration of the same name replaces it when its host starts.
   */
  readonly viaOperation?: boolean;
}

function encodeTarget(target: ScheduleTargetInfo): Record<string, unknown> {
  const { options } = target;
  // Header names sorted, so an unchanged definition encodes to the same bytes.
  const headers = Object.fromEntries(Object.entries(options.headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return {
    t: target.type,
    q: target.queueName,
    w: target.type === 'start' ? target.workflow : target.type === 'job' ? target.job : undefined,
    i: target.input,
    h: headers,
    p: options.priority,
    a: options.maxAttempts,
  };
}

/** The part of a schedule a redefinition compares: expression, zone and target. */
export function definitionBytes(schedule: Pick<ScheduleInfo, 'cron' | 'timezone' | 'target'>): Uint8Array {
  return encodeRecord({ c: schedule.cron, z: schedule.timezone, t: encodeTarget(schedule.target) });
}

export function sameDefinition(a: ScheduleInfo, b: ScheduleInfo): boolean {
  return equalBytes(definitionBytes(a), definitionBytes(b));
}

export function encodeSchedule(s: ScheduleInfo): Uint8Array {
  return encodeRecord({
    v: FORMAT,
    name: s.name,
    cron: s.cron,
    tz: s.timezone,
    target: encodeTarget(s.target),
    defined: s.definedAtMs,
    next: s.nextFireMs,
    last: s.lastFireMs,
    lastId: s.lastFireId,
    d: s.declared === true ? true : undefined,
    op: s.viaOperation === true ? true : undefined,
  });
}

const TARGET_TYPES = new Set(['start', 'submit', 'job', 'enqueue']);

function corrupt(key: Uint8Array, problem: string): CorruptDataError {
  return new CorruptDataError(`schedule record does not decode: ${problem}. key=${fromUtf8(key)}`, { reason: 'undecodable_record', key: fromUtf8(key) });
}

const isStringRecord = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
const optionalNumber = (v: unknown): boolean => v === undefined || v === null || typeof v === 'number';

/** The record under `key`; CORRUPT_DATA (reason `undecodable_record`) for bytes of another shape. */
export function decodeSchedule(key: Uint8Array, bytes: Uint8Array): ScheduleInfo {
  let r: Record<string, unknown>;
  try {
    r = decodeRecord(bytes) as Record<string, unknown>;
  } catch {
    throw corrupt(key, 'not MessagePack');
  }
  if (typeof r !== 'object' || r === null) throw corrupt(key, 'not a map');
  if (r.v !== FORMAT) throw corrupt(key, `unknown format ${String(r.v)}`);
  const t = r.target as Record<string, unknown> | undefined;
  const ok =
    typeof r.name === 'string' &&
    typeof r.cron === 'string' &&
    typeof r.tz === 'string' &&
    typeof r.defined === 'number' &&
    typeof r.next === 'number' &&
    optionalNumber(r.last) &&
    (r.lastId === undefined || r.lastId === null || typeof r.lastId === 'string') &&
    typeof t === 'object' &&
    t !== null &&
    TARGET_TYPES.has(t.t as string) &&
    typeof t.q === 'string' &&
    t.i instanceof Uint8Array &&
    isStringRecord(t.h) &&
    optionalNumber(t.p) &&
    optionalNumber(t.a) &&
    ((t.t !== 'start' && t.t !== 'job') || typeof t.w === 'string');
  if (!ok) throw corrupt(key, 'missing or mistyped fields');
  const options: ScheduleTargetOptions = {
    headers: t!.h as Record<string, string>,
    ...(typeof t!.p === 'number' ? { priority: t!.p } : {}),
    ...(typeof t!.a === 'number' ? { maxAttempts: t!.a } : {}),
  };
  const base = { queueName: t!.q as string, input: t!.i as Uint8Array, options };
  const type = t!.t as ScheduleTargetInfo['type'];
  const target: ScheduleTargetInfo =
    type === 'start' ? { type, workflow: t!.w as string, ...base } : type === 'job' ? { type, job: t!.w as string, ...base } : { type, ...base };
  return {
    name: r.name as string,
    cron: r.cron as string,
    timezone: r.tz as string,
    target,
    definedAtMs: r.defined as number,
    nextFireMs: r.next as number,
    ...(typeof r.last === 'number' ? { lastFireMs: r.last } : {}),
    ...(typeof r.lastId === 'string' ? { lastFireId: r.lastId } : {}),
    ...(r.d === true ? { declared: true } : {}),
    ...(r.op === true ? { viaOperation: true } : {}),
  };
}
