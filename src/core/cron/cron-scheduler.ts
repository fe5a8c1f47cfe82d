/**
 * `CronScheduler`: cron schedules kept in the store, fired by the process that holds the queue
 * handle (the store's writer). Schedules are defined in code (`schedules`, written when the loop
 * starts) or at any time (`define`, `replace`, `delete`; from another process through the
 * operations, schedule-commands.ts), and listed from any process (`listSchedules` on a
 * `QueueReader`).
 *
 * The loop (`run`) sleeps until the soonest recorded firing (or a change to the schedules), fires
 * every due schedule once (firing.ts: one job or run per fire time, whoever fires it, however
 * often it is retried), and sleeps again. After a gap (the writer was down, the machine slept)
 * each schedule makes up its one recorded overdue firing, then goes on with the first firing
 * strictly after now: no backfill. A firing that fails (a store error, a target runtime missing
 * here) is logged and retried, backing off from `retryDelayMs` to a minute, with the same fire
 * time: never dropped. FENCED and CLOSED end the loop: this handle is no longer the writer.
 */
import type { Clock } from '../clock.js';
import { ConflictError, InvalidArgumentError, InvalidConfigError, isTaqubaError } from '../errors.js';
import { JobRunner } from '../jobs/job-runner.js';
import { resolveLogger, type LoggerOption, type LogSink } from '../logger.js';
import { checkOptions, numberRule, optionNames } from '../options.js';
import { Queue } from '../queue/index.js';
import { show } from '../show.js';
import { spawnRunner, type RunnerHandle } from '../workflow/runner-handle.js';
import { WorkflowRuntime } from '../workflow/runtime.js';
import { parseCronExpression, type CronExpression } from './cron-expression.js';
import { fire, type CronFiring } from './firing.js';
import { notifySchedulesChanged, onSchedulesChanged, withScheduleLock } from './queue-schedules.js';
import { checkScheduleName, newScheduleRecord, resolveDeclared, resolveSchedule, type AnySchedule, type ResolvedSchedule, type Schedule, type ScheduleExecutors } from './schedule.js';
import { listSchedules, readSchedule, scanSchedules } from './schedule-list.js';
import { encodeSchedule, sameDefinition, scheduleKey, type ScheduleInfo } from './schedule-record.js';
import type { ScheduleWriteResult } from './schedule-commands.js';
import { applyCommand, type CommandOptions, type CommandRecord } from '../workflow/commands/ledger.js';

export interface CronSchedulerOptions {
  /** The runtime `start` and `submit` targets run on (on the same queue handle). */
  readonly runtime?: WorkflowRuntime;
  /** The job runner `job` targets run on (on the same queue handle). */
  readonly jobs?: JobRunner;
  /**
   * Schedules declared in code, written when `run` (or `fireDueNow`) first starts: a new one is
   * created, a changed one replaced (keeping its recorded next firing when its expression and zone
   * are unchanged), and marked as declared. Schedules in the store that are not listed here are
   * left alone, unless `removeUndeclared`.
   */
  readonly schedules?: readonly AnySchedule[];
  /**
   * When the declared schedules are written, also delete those an earlier declaration wrote that
   * `schedules` no longer lists (schedules made with `define` or `replace` stay). Default false:
   * a scheduler cannot know what another on the same store declares. A runtime host sets it, its
   * `schedules` being the app's whole declaration.
   */
  readonly removeUndeclared?: boolean;
  /**
   * @internal The run id of a firing that starts a run; fixed per (schedule, fire time). Default
   * `cron-{name}-{fireMs}`; a cluster shard picks one its shard owns (cluster-schedules.ts).
   */
  readonly firingRunId?: (schedule: string, fireMs: number) => string;
  /** First wait before a failed firing is tried again (doubling per failure, up to a minute or this, if longer). Default 1 s. */
  readonly retryDelayMs?: number;
  /** Default: the queue's clock. */
  readonly clock?: Clock;
  /** Default: the queue's logger. Firings are logged at info, failed firings at warn. */
  readonly logger?: LoggerOption;
}

const OPTION_NAMES = optionNames<CronSchedulerOptions>({ runtime: true, jobs: true, schedules: true, removeUndeclared: true, firingRunId: true, retryDelayMs: true, clock: true, logger: true });

const DEFAULT_RETRY_DELAY_MS = 1000;
const MAX_RETRY_DELAY_MS = 60_000;
/** The longest single sleep: a wall clock that jumps (a machine that slept) is noticed within this. */
const MAX_SLEEP_MS = 60 * 60_000;

/** How a write treats a stored schedule of the same name, and how it marks what it writes. */
interface PutMode {
  /** Replace another definition (else CONFLICT). */
  readonly replace: boolean;
  readonly mark: 'declared' | 'operation' | undefined;
}
const DEFINE: PutMode = { replace: false, mark: undefined };
const REPLACE: PutMode = { replace: true, mark: undefined };
const DECLARE: PutMode = { replace: true, mark: 'declared' };
const DEFINE_BY_OPERATION: PutMode = { replace: false, mark: 'operation' };
const REPLACE_BY_OPERATION: PutMode = { replace: true, mark: 'operation' };

interface Failure {
  readonly count: number;
  readonly retryAtMs: number;
}

/** The scheduler's settings a host passes on (`cronOptions`), without its targets and schedules. */
export type CronSettings = Pick<CronSchedulerOptions, 'retryDelayMs' | 'clock' | 'logger'>;

/**
 * Checks the settings as a scheduler will (a cluster does so when it opens, before any shard
 * builds one): INVALID_CONFIG for a `retryDelayMs` below 1 or not a number, a clock without
 * now() and sleep(), a logger that is not one.
 */
export function checkSchedulerSettings(settings: CronSettings): void {
  if (settings.clock !== undefined && (typeof settings.clock?.now !== 'function' || typeof settings.clock?.sleep !== 'function')) {
    throw new InvalidConfigError(`clock must implement now() and sleep(). clock=${show(settings.clock)}`, { option: 'clock' });
  }
  if (settings.logger !== undefined) resolveLogger(settings.logger);
  const retry = settings.retryDelayMs;
  const rule = retry === undefined ? undefined : numberRule(retry, { min: 1 });
  if (rule !== undefined) throw new InvalidConfigError(`retryDelayMs ${rule} (milliseconds). retryDelayMs=${show(retry)}`, { option: 'retryDelayMs' });
}

export class CronScheduler {
  private readonly executors: ScheduleExecutors;
  private readonly declared: readonly ResolvedSchedule[];
  private readonly clock: Clock;
  private readonly log: LogSink;
  private readonly retryDelayMs: number;
  private readonly failures = new Map<string, Failure>();
  private readonly expressions = new Map<string, CronExpression>();
  private readonly removeUndeclared: boolean;
  private readonly runIdOf: ((schedule: string, fireMs: number) => string) | undefined;
  private declaredWritten = false;

  /**
   * A scheduler of the schedules in `queue`'s store. Pure: no I/O until a call. Throws
   * INVALID_CONFIG for bad options, INVALID_ARGUMENT for a `queue` that is not a Queue, a bad
   * declared schedule (see `define`) or two declared under one name (reason `duplicate_schedule`).
   * @example
   * const scheduler = new CronScheduler(queue, {
   *   runtime,
   *   schedules: [{ name: 'nightly-report', cron: '0 3 * * *', timezone: 'Europe/Paris', start: [report, { scope: 'all' }] }],
   * });
   * const cron = scheduler.spawn();
   * // ... at shutdown:
   * await cron.shutdown();
   */
  constructor(
    private readonly queue: Queue,
    options: CronSchedulerOptions = {},
  ) {
    if (!(queue instanceof Queue)) throw new InvalidArgumentError(`a cron scheduler takes the Queue its schedules live in. queue=${show(queue)}`, { argument: 'queue', value: show(queue) });
    checkOptions(options, OPTION_NAMES, 'cron scheduler');
    if (options.runtime !== undefined && !(options.runtime instanceof WorkflowRuntime)) throw new InvalidConfigError(`runtime must be a WorkflowRuntime. runtime=${show(options.runtime)}`, { option: 'runtime' });
    if (options.jobs !== undefined && !(options.jobs instanceof JobRunner)) throw new InvalidConfigError(`jobs must be a JobRunner. jobs=${show(options.jobs)}`, { option: 'jobs' });
    this.executors = { runtime: options.runtime, jobs: options.jobs };
    checkSchedulerSettings(options);
    this.clock = options.clock ?? queue.clock;
    this.log = options.logger === undefined ? queue.logger : resolveLogger(options.logger);
    this.retryDelayMs = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    if (options.removeUndeclared !== undefined && typeof options.removeUndeclared !== 'boolean') {
      throw new InvalidConfigError(`removeUndeclared must be a boolean. removeUndeclared=${show(options.removeUndeclared)}`, { option: 'removeUndeclared' });
    }
    this.removeUndeclared = options.removeUndeclared ?? false;
    if (options.firingRunId !== undefined && typeof options.firingRunId !== 'function') throw new InvalidConfigError(`firingRunId must be a function. firingRunId=${show(options.firingRunId)}`, { option: 'firingRunId' });
    this.runIdOf = options.firingRunId;
    this.declared = resolveDeclared(options.schedules ?? [], this.executors);
  }

  /**
   * Creates a schedule; its first firing is the first one strictly after now. Defining it again
   * as it is stored changes nothing and resolves with the stored schedule; another definition
   * under a stored name rejects with CONFLICT (reason `duplicate_schedule`; `replace` changes
   * it). Rejects with INVALID_ARGUMENT for a bad schedule: reason `invalid_cron_expression` (not 5
   * POSIX fields, a value out of range, never fires), `invalid_timezone`, `invalid_schedule_name`,
   * `invalid_schedule` (no or several targets, a target this scheduler has no runtime or job
   * runner for, an unknown key), and the target's own checks (`unknown_workflow`,
   * `unregistered_job`, `invalid_job_input`, `unstorable_input`, `reserved_header`); CLOSED or
   * store errors.
   */
  async define<I>(schedule: Schedule<I>): Promise<ScheduleInfo> {
    return (await this.put(resolveSchedule(schedule, this.executors), DEFINE)).record;
  }

  /**
   * Creates or replaces a schedule. A schedule whose expression and zone are unchanged keeps its
   * recorded next firing (also an overdue one); a new expression or zone fires next at its first
   * firing strictly after now. Rejects as `define`, without the CONFLICT.
   */
  async replace<I>(schedule: Schedule<I>): Promise<ScheduleInfo> {
    return (await this.put(resolveSchedule(schedule, this.executors), REPLACE)).record;
  }

  /**
   * @internal The schedule operations' writes (`addSchedule`: `replace` false, as `define`;
   * `replaceSchedule`: as `replace`), marking the schedule `viaOperation`, applied once per
   * command id: the answer is committed with the schedule's record (ledger.ts). Rejects as
   * `define` / `replace`.
   */
  async writeFromOperation(schedule: AnySchedule, replace: boolean, options?: CommandOptions): Promise<ScheduleWriteResult> {
    const resolved = resolveSchedule(schedule, this.executors);
    return applyCommand(this.queue, this.clock, options, async (ledger) => (await this.put(resolved, replace ? REPLACE_BY_OPERATION : DEFINE_BY_OPERATION, ledger)).result);
  }

  /**
   * Writes `resolved` under its lock, as `mode` says: a new one is created; one stored with the
   * same definition stays (only a declaration marks it); another definition is a CONFLICT
   * (`define`) or replaced, keeping its recorded next firing when its expression and zone are
   * unchanged, and its last firing. A `ledger` record is committed with the write.
   */
  private put(resolved: ResolvedSchedule, mode: PutMode, ledger?: CommandRecord): Promise<{ record: ScheduleInfo; result: ScheduleWriteResult }> {
    return withScheduleLock(this.queue, resolved.name, async () => {
      const existing = await readSchedule(this.queue, resolved.name);
      const fresh = newScheduleRecord(resolved, this.clock.now());
      const candidate: ScheduleInfo = { ...fresh, ...(mode.mark === 'declared' ? { declared: true } : mode.mark === 'operation' ? { viaOperation: true } : {}) };
      const done = async (record: ScheduleInfo, change: ScheduleWriteResult['change'], write: boolean) => {
        const result: ScheduleWriteResult = { name: record.name, change, nextFireMs: record.nextFireMs };
        if (write) await this.write(record, ledger?.writes(result) ?? []);
        return { record, result };
      };
      if (existing === null) return done(candidate, 'created', true);
      if (sameDefinition(existing, candidate)) {
        // Only a declaration changes the mark of an unchanged schedule: the code owns it from now on.
        if (mode.mark !== 'declared' || existing.declared === true) return done(existing, 'unchanged', false);
        const { viaOperation: _, ...unmarked } = existing;
        return done({ ...unmarked, declared: true }, 'unchanged', true);
      }
      if (!mode.replace) {
        throw new ConflictError(`a schedule with this name exists with another definition (replace changes it). schedule=${resolved.name}`, {
          reason: 'duplicate_schedule',
          schedule: resolved.name,
        });
      }
      const sameTiming = existing.cron === candidate.cron && existing.timezone === candidate.timezone;
      const replaced: ScheduleInfo = {
        ...candidate,
        ...(sameTiming ? { nextFireMs: existing.nextFireMs } : {}),
        ...(existing.lastFireMs === undefined ? {} : { lastFireMs: existing.lastFireMs }),
        ...(existing.lastFireId === undefined ? {} : { lastFireId: existing.lastFireId }),
      };
      return done(replaced, 'replaced', true);
    });
  }

  /** Stores `record` (with `also`, a command's answer, in the same transaction) and wakes the loops. */
  private async write(record: ScheduleInfo, also: readonly [Uint8Array, Uint8Array][]): Promise<void> {
    await this.queue.commitEffects({ kvWrites: [[scheduleKey(record.name), encodeSchedule(record)], ...also] });
    this.failures.delete(record.name);
    notifySchedulesChanged(this.queue);
  }

  /** Deletes a schedule: no firing after this resolves. False when there was none. INVALID_ARGUMENT for a bad name. */
  async delete(name: string): Promise<boolean> {
    return this.remove(name, undefined);
  }

  /**
   * @internal `removeSchedule` of the operations: `delete`, applied once per command id (the
   * answer committed with the delete), so a resend after the name was defined again deletes nothing.
   */
  removeFromOperation(name: string, options?: CommandOptions): Promise<boolean> {
    checkScheduleName(name);
    return applyCommand(this.queue, this.clock, options, (ledger) => this.remove(name, ledger));
  }

  private remove(name: string, ledger: CommandRecord | undefined): Promise<boolean> {
    checkScheduleName(name);
    return withScheduleLock(this.queue, name, async () => {
      if ((await this.queue.kvGet(scheduleKey(name))) === undefined) return false;
      await this.queue.commitEffects({ kvDeletes: [scheduleKey(name)], kvWrites: ledger?.writes(true) ?? [] });
      this.failures.delete(name);
      notifySchedulesChanged(this.queue);
      return true;
    });
  }

  /** One schedule with its next and last firing, or null. INVALID_ARGUMENT for a bad name; CORRUPT_DATA for an undecodable record. */
  get(name: string): Promise<ScheduleInfo | null> {
    return readSchedule(this.queue, name);
  }

  /** Every schedule in the store, in name order (also those defined by other code). */
  list(): Promise<ScheduleInfo[]> {
    return listSchedules(this.queue);
  }

  /**
   * Runs one pass now: writes the declared schedules (the first time), then fires every due
   * schedule whose retry wait (after a failure) is over. Resolves with the firings made; a failed
   * firing is logged and left due, an undecodable schedule record logged and skipped. Rejects with
   * FENCED or CLOSED (this handle is no longer the writer) or store errors while listing.
   */
  async fireDueNow(): Promise<CronFiring[]> {
    return (await this.pass()).firings;
  }

  /** One pass, and when the next is due. */
  private async pass(signal?: AbortSignal): Promise<{ firings: CronFiring[]; wakeAtMs: number }> {
    if (!this.declaredWritten) {
      for (const resolved of this.declared) await this.put(resolved, DECLARE);
      if (this.removeUndeclared) await this.removeDropped();
      this.declaredWritten = true;
    }
    const firings: CronFiring[] = [];
    let wakeAtMs = Infinity;
    // An undecodable record is skipped (logged), so one bad record does not stop the others.
    const schedules = await scanSchedules(this.queue, (e) => this.log.error('[cron] a schedule record does not decode; it is not fired', { error: e instanceof Error ? e.message : String(e) }));
    for (const listed of schedules) {
      if (signal?.aborted) break;
      wakeAtMs = Math.min(wakeAtMs, await this.fireIfDue(listed, firings));
    }
    return { firings, wakeAtMs };
  }

  /**
   * Fires `listed` when it is due and not waiting out a failure, adding the firing to `firings`;
   * resolves with when to look at it next. Rejects only with FENCED or CLOSED.
   */
  private async fireIfDue(listed: ScheduleInfo, firings: CronFiring[]): Promise<number> {
    const failure = this.failures.get(listed.name);
    const now = this.clock.now();
    if (listed.nextFireMs > now || (failure !== undefined && failure.retryAtMs > now)) return Math.max(listed.nextFireMs, failure?.retryAtMs ?? 0);
    try {
      const next = await withScheduleLock(this.queue, listed.name, async () => {
        // Read again under the lock: another scheduler on this handle may have fired it, or it changed.
        const current = await readSchedule(this.queue, listed.name);
        if (current === null) return Infinity;
        const at = this.clock.now();
        if (current.nextFireMs > at) return current.nextFireMs;
        const expression = this.expressionOf(current);
        const firing = await fire(this.queue, this.executors, current, expression, at, this.runIdOf);
        firings.push(firing);
        this.log.info(`[cron] fired schedule ${current.name}`, { schedule: current.name, fireTime: new Date(firing.fireMs).toISOString(), id: firing.id });
        return expression.nextAfter(Math.max(at, firing.fireMs));
      });
      this.failures.delete(listed.name);
      return next;
    } catch (e) {
      if (isTaqubaError(e, 'FENCED') || isTaqubaError(e, 'CLOSED')) throw e;
      const count = (failure?.count ?? 0) + 1;
      const delay = Math.min(this.retryDelayMs * 2 ** (count - 1), Math.max(MAX_RETRY_DELAY_MS, this.retryDelayMs));
      const retryAtMs = this.clock.now() + delay;
      this.failures.set(listed.name, { count, retryAtMs });
      this.log.warn(`[cron] firing of schedule ${listed.name} failed; retried in ${delay} ms`, {
        schedule: listed.name,
        fireTime: new Date(listed.nextFireMs).toISOString(),
        failures: count,
        error: e instanceof Error ? e.message : String(e),
      });
      return retryAtMs;
    }
  }

  /** Deletes the declared schedules this scheduler's list no longer has (`removeUndeclared`). */
  private async removeDropped(): Promise<void> {
    const kept = new Set(this.declared.map((d) => d.name));
    const stored = await scanSchedules(this.queue, () => undefined);
    for (const schedule of stored) {
      if (schedule.declared !== true || kept.has(schedule.name)) continue;
      await withScheduleLock(this.queue, schedule.name, async () => {
        // Read again under the lock: a `replace` since the scan made it the app's own.
        if ((await readSchedule(this.queue, schedule.name))?.declared !== true) return;
        await this.queue.kvDelete(scheduleKey(schedule.name));
        this.failures.delete(schedule.name);
        notifySchedulesChanged(this.queue);
        this.log.info(`[cron] deleted schedule ${schedule.name}: no longer declared`, { schedule: schedule.name });
      });
    }
  }

  /** The parsed expression of a stored schedule (cached: records are re-read every pass). */
  private expressionOf(schedule: ScheduleInfo): CronExpression {
    const key = `${schedule.timezone} ${schedule.cron}`;
    let expression = this.expressions.get(key);
    if (!expression) {
      expression = parseCronExpression(schedule.cron, schedule.timezone);
      this.expressions.set(key, expression);
    }
    return expression;
  }

  /**
   * Fires schedules until `signal` aborts (see the module comment); on abort, finishes the firing
   * in flight and resolves. Rejects with FENCED or CLOSED once this handle is no longer the
   * writer (other failures are logged and retried).
   */
  async run(signal?: AbortSignal): Promise<void> {
    while (!signal?.aborted) {
      // Listening before the pass: a change made during it cuts the sleep after it short.
      const wake = new AbortController();
      const stopListening = onSchedulesChanged(this.queue, () => wake.abort());
      const forward = (): void => wake.abort();
      signal?.addEventListener('abort', forward, { once: true });
      try {
        let wakeAtMs: number;
        try {
          wakeAtMs = (await this.pass(signal)).wakeAtMs;
        } catch (e) {
          if (isTaqubaError(e, 'FENCED') || isTaqubaError(e, 'CLOSED')) throw e;
          this.log.warn('[cron] listing schedules failed; trying again', { error: e instanceof Error ? e.message : String(e) });
          wakeAtMs = this.clock.now() + this.retryDelayMs;
        }
        const sleepMs = Math.min(Math.max(0, wakeAtMs - this.clock.now()), MAX_SLEEP_MS);
        await this.clock.sleep(sleepMs, wake.signal).catch(() => undefined);
      } finally {
        stopListening();
        signal?.removeEventListener('abort', forward);
      }
    }
  }

  /** `run` in the background; `shutdown()` stops it and waits for the firing in flight. */
  spawn(signal?: AbortSignal): RunnerHandle {
    return spawnRunner((stop) => this.run(stop), signal);
  }
}
