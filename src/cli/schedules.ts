/**
 * `taquba schedules`: the cron schedules kept in the store, with their next and last firing. A
 * read-only look beside the live writer (whose `CronScheduler` fires them); a next firing in the
 * past means no scheduler has fired it yet (none runs, or the writer is down).
 *
 * `schedules add` and `schedules remove` change them at run time: sent as commands through the
 * live writer's runtime inbox, applied by its runtime host (which checks the workflow against its
 * code), each once per command id. `add` needs that live host; `remove` also works as the writer.
 */
import { isTaqubaError } from '../core/errors.js';
import { CronScheduler } from '../core/cron/cron-scheduler.js';
import type { ScheduleDefinition, ScheduleWriteResult } from '../core/cron/schedule-commands.js';
import { listSchedules } from '../core/cron/schedule-list.js';
import type { ScheduleInfo, ScheduleTargetInfo } from '../core/cron/schedule-record.js';
import type { Queue } from '../core/queue/index.js';
import { RuntimeClient } from '../core/workflow/commands/runtime-client.js';
import { DEFAULT_QUEUE_NAME } from '../core/workflow/constants.js';
import { CliError, EXIT_FAILURE, usageError } from './cli-error.js';
import { DEFAULT_COMMAND_TIMEOUT_S, explainTimeout, type GlobalOptions, type Io, type WriteOptions } from './commands.js';
import { colorEnabled, makeColors, relativeTime, table, type Colors } from './format.js';
import { document } from './json.js';
import { openReader, openStore, openWriter } from './store.js';

/** What a firing enqueues, in a few words. */
function targetText(target: ScheduleTargetInfo): string {
  if (target.type === 'start') return `start ${target.workflow} on ${target.queueName}`;
  if (target.type === 'job') return `job ${target.job} on ${target.queueName}`;
  if (target.type === 'submit') return `run on ${target.queueName}`;
  return `enqueue on ${target.queueName}`;
}

const isoMinute = (ms: number): string => new Date(ms).toISOString().replace(/:00\.000Z$/, 'Z');

export function schedulesView(schedules: readonly ScheduleInfo[], nowMs: number, colors: Colors): string {
  if (schedules.length === 0) return colors.dim('no schedules');
  const rows = schedules.map((s) => {
    const next = `${isoMinute(s.nextFireMs)} (${s.nextFireMs < nowMs ? colors.yellow(`overdue, ${relativeTime(s.nextFireMs, nowMs)}`) : relativeTime(s.nextFireMs, nowMs)})`;
    const last = s.lastFireMs === undefined ? colors.dim('never') : `${relativeTime(s.lastFireMs, nowMs)} ${colors.dim(s.lastFireId ?? '')}`.trimEnd();
    return [s.name, s.cron, s.timezone, targetText(s.target), next, last];
  });
  return table(['SCHEDULE', 'CRON', 'ZONE', 'TARGET', 'NEXT', 'LAST'], rows, colors);
}

export function jsonSchedule(s: ScheduleInfo): Record<string, unknown> {
  const t = s.target;
  return {
    name: s.name,
    cron: s.cron,
    timezone: s.timezone,
    target: { type: t.type, queueName: t.queueName, workflow: t.type === 'start' ? t.workflow : null, job: t.type === 'job' ? t.job : null, headers: t.options.headers },
    definedAtMs: s.definedAtMs,
    nextFireMs: s.nextFireMs,
    lastFireMs: s.lastFireMs ?? null,
    lastFireId: s.lastFireId ?? null,
    origin: s.declared === true ? 'declared' : s.viaOperation === true ? 'operation' : 'defined',
  };
}

export async function schedulesCommand(io: Io, options: GlobalOptions): Promise<void> {
  const opened = await openStore(options);
  try {
    const { reader, path } = await openReader(opened, options);
    try {
      const schedules = await listSchedules(reader.queue);
      const nowMs = io.now();
      if (options.json) io.out(document('schedules', { store: options.store, path, queue: null, nowMs }, { schedules: schedules.map(jsonSchedule) }));
      else io.out(schedulesView(schedules, nowMs, makeColors(colorEnabled(io.env, io.isTty))));
    } finally {
      await reader.close();
    }
  } finally {
    opened.close();
  }
}

/** How a schedule write reached the store: the live writer's host applied it, or the CLI as the writer. */
type Via = 'live-writer' | 'writer';

/**
 * Sends host command `method` through the live writer's runtime inbox (the runtime of `--queue`,
 * default `workflow-steps`, whose host registered it), or, when no live writer holds the store,
 * runs `asWriter` as the store's writer (NO_LIVE_WRITER when there is none: the command needs the
 * application's code).
 */
async function sendToHost<T>(options: GlobalOptions, local: WriteOptions, what: string, method: string, args: unknown[], asWriter?: (queue: Queue) => Promise<T>): Promise<{ value: T; path: string; queueName: string; via: Via }> {
  const opened = await openStore(options);
  const queueName = options.queue ?? DEFAULT_QUEUE_NAME;
  try {
    const access = await openWriter(opened, options, local.force ?? false);
    if (access.kind === 'writer') {
      try {
        if (asWriter === undefined) {
          throw new CliError(
            'NO_LIVE_WRITER',
            `${what} is checked against the application's workflows, and no live process holds the store. store=${JSON.stringify(opened.location)} path=${JSON.stringify(access.path)}`,
            "start the application (its runtime host with schedules, serving the runtime's inbox) and run this again",
          );
        }
        return { value: await asWriter(access.queue), path: access.path, queueName, via: 'writer' };
      } finally {
        await access.queue.close();
      }
    }
    const client = new RuntimeClient(opened.store, { path: access.path, queueName, timeoutMs: (local.timeout ?? DEFAULT_COMMAND_TIMEOUT_S) * 1000 });
    try {
      const once = local.commandId === undefined ? undefined : { commandId: local.commandId };
      const value = (await client.sendOperation(method, args, once).catch((e: unknown) => {
        throw explainTimeout(e, access.why, { ...local, hasWriterLock: opened.hasWriterLock });
      })) as T;
      return { value, path: access.path, queueName, via: 'live-writer' };
    } finally {
      client.close();
    }
  } finally {
    opened.close();
  }
}

/** Library refusals of a schedule write, with what to do about them. */
function scheduleError(e: unknown, queueName: string): unknown {
  if (isTaqubaError(e, 'CONFLICT') && e.details.reason === 'duplicate_schedule') {
    return new CliError('CONFLICT', e.message, 'add --replace to change it, or pick another name', EXIT_FAILURE, { cause: e });
  }
  if (isTaqubaError(e, 'INVALID_ARGUMENT') && (e.details.reason === 'cron_not_configured' || e.details.reason === 'unknown_operation')) {
    return new CliError(
      'INVALID_ARGUMENT',
      e.message,
      `the live process must serve schedules on queue ${queueName}: a runtime host built with schedules (even an empty list), e.g. createRuntimeHost({ schedules: [] }); name its queue with --queue`,
      EXIT_FAILURE,
      { cause: e },
    );
  }
  return e;
}

export interface ScheduleAddOptions extends WriteOptions {
  readonly cron: string;
  readonly tz?: string;
  readonly workflow: string;
  readonly input?: string;
  readonly replace?: boolean;
}

export async function scheduleAddCommand(io: Io, options: GlobalOptions, name: string, local: ScheduleAddOptions): Promise<void> {
  let input: unknown;
  if (local.input !== undefined) {
    try {
      input = JSON.parse(local.input);
    } catch {
      throw usageError(`--input is not JSON. input=${JSON.stringify(local.input)}`, `quote it for the shell, e.g. --input '{"to":"ops"}' or --input '"text"'`);
    }
  }
  const definition: ScheduleDefinition = {
    name,
    cron: local.cron,
    workflow: local.workflow,
    ...(local.tz === undefined ? {} : { timezone: local.tz }),
    ...(input === undefined ? {} : { input }),
  };
  const method = local.replace ? 'replaceSchedule' : 'addSchedule';
  const queueName = options.queue ?? DEFAULT_QUEUE_NAME;
  const sent = await sendToHost<ScheduleWriteResult>(options, local, 'adding a schedule', method, [definition]).catch((e: unknown) => {
    throw scheduleError(e, queueName);
  });
  const result = sent.value;
  const nowMs = io.now();
  const context = { store: options.store, path: sent.path, queue: sent.queueName, nowMs };
  if (options.json) io.out(document('schedules-add', context, { schedule: result, via: sent.via }));
  else io.out(`schedule ${result.name} ${result.change}: next firing ${isoMinute(result.nextFireMs)} (${relativeTime(result.nextFireMs, nowMs)})`);
}

export async function scheduleRemoveCommand(io: Io, options: GlobalOptions, name: string, local: WriteOptions): Promise<void> {
  const queueName = options.queue ?? DEFAULT_QUEUE_NAME;
  const once = local.commandId === undefined ? undefined : { commandId: local.commandId };
  const sent = await sendToHost<boolean>(options, local, 'removing a schedule', 'removeSchedule', [name], (queue) => new CronScheduler(queue, { logger: false }).removeFromOperation(name, once)).catch((e: unknown) => {
    throw scheduleError(e, queueName);
  });
  const context = { store: options.store, path: sent.path, queue: sent.queueName, nowMs: io.now() };
  io.out(options.json ? document('schedules-remove', context, { name, removed: sent.value, via: sent.via }) : sent.value ? `schedule ${name} removed: no firing from now on` : `schedule ${name}: none of this name`);
  if (!sent.value) throw new CliError('NOT_FOUND', `no schedule of this name. schedule=${JSON.stringify(name)}`, 'list the schedules with: taquba schedules');
}
