/**
 * Cron schedules (the reference's `taquba-cron`, plus what it lacks): 5-field POSIX cron in UTC or
 * an IANA time zone, schedules kept in the store (they survive restarts and are listed from any
 * process), exactly one enqueue per fire time across schedulers and retries, no backfill after a
 * gap beyond the one recorded overdue firing, and targets that start workflow functions, plain
 * runs, typed jobs or plain queue jobs.
 *
 * Above the runtime and the jobs (it submits to them); beside bulk and webhooks.
 *
 * Durable state: caller KV `workflow/cron/schedules/{name}` (schedule-record.ts); the command
 * ledger's answer of each run it starts (`cron:{name}:{fireMs}`) and of each schedule operation
 * (schedule-commands.ts: schedules added, replaced or removed at run time by another process).
 *
 * Errors: INVALID_ARGUMENT (`invalid_cron_expression`, `invalid_timezone`, `invalid_schedule`,
 * `invalid_schedule_name`, `duplicate_schedule` among declared schedules), CONFLICT
 * (`duplicate_schedule` from `define`), INVALID_CONFIG (scheduler options), CORRUPT_DATA (an
 * undecodable schedule record), and the queue's CLOSED / FENCED / STORE_*.
 */
export { CronScheduler, type CronSchedulerOptions } from './cron-scheduler.js';
export { parseCronExpression, type CronExpression } from './cron-expression.js';
export type { Schedule, ScheduleTarget, AnySchedule } from './schedule.js';
export type { ScheduleInfo, ScheduleTargetInfo, ScheduleTargetOptions } from './schedule-record.js';
export { listSchedules, type ScheduleSource } from './schedule-list.js';
export { HEADER_CRON_SCHEDULE, HEADER_CRON_FIRE_TIME, type CronFiring } from './firing.js';
export { scheduleOfDefinition, type ScheduleCommands, type ScheduleDefinition, type ScheduleWriteResult } from './schedule-commands.js';
