/**
 * `taquba schedules`: the cron schedules kept in the store, with their next and last firing. A
 * read-only look beside the live writer (whose `CronScheduler` fires them); a next firing in the
 * past means no scheduler has fired it yet (none runs, or the writer is down).
 */
import { listSchedules } from '../core/cron/schedule-list.js';
import type { ScheduleInfo, ScheduleTargetInfo } from '../core/cron/schedule-record.js';
import type { GlobalOptions, Io } from './commands.js';
import { colorEnabled, makeColors, relativeTime, table, type Colors } from './format.js';
import { document } from './json.js';
import { openReader, openStore } from './store.js';

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
