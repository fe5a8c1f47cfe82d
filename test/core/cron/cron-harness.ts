/**
 * What the cron tests share: a queue on a MockClock at a known instant, a logger that keeps its
 * lines, and a way to wait until a scheduler's loop sleeps (so a clock advance lands on it).
 */
import { onTestFinished } from 'vitest';
import { MockClock } from '../../../src/core/clock.js';
import type { LogFields, Logger } from '../../../src/core/logger.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import { Queue } from '../../../src/core/queue/index.js';
import { waitFor } from '../../support/wait.js';

/** 2025-01-01T00:00:30Z: half a minute before a minutely schedule's first firing. */
export const START_MS = Date.parse('2025-01-01T00:00:30.000Z');

export const at = (iso: string): number => Date.parse(iso);

/** A logger that keeps every line. */
export class RecordingLogger implements Logger {
  readonly lines: { level: string; message: string; fields?: LogFields }[] = [];
  info(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'info', message, fields });
  }
  warn(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'warn', message, fields });
  }
  error(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'error', message, fields });
  }
  at(level: string): { message: string; fields?: LogFields }[] {
    return this.lines.filter((l) => l.level === level);
  }
}

/** A queue at `path` of `store` on `clock`, closed when the test ends. */
export async function openQueue(store: ObjectStore = new MemoryObjectStore(), clock = new MockClock(START_MS), path = 'app'): Promise<{ store: ObjectStore; clock: MockClock; queue: Queue }> {
  // The queue's own loops tick hourly: advancing the mock clock by days then wakes them a few
  // dozen times, not once a second.
  const queue = await Queue.open(store, path, { clock, logger: false, reaperIntervalMs: 3_600_000, schedulerIntervalMs: 3_600_000 });
  onTestFinished(async () => {
    await queue.close().catch(() => undefined);
  });
  return { store, clock, queue };
}

/** The jobs waiting on `queueName` (pending or scheduled). */
export async function waitingJobs(queue: Queue, queueName: string) {
  return [...(await queue.listJobs(queueName, 'pending')).jobs, ...(await queue.listJobs(queueName, 'scheduled')).jobs];
}

/**
 * Waits until `clock` has `sleepers` sleepers (a loop parked on it), real time. The queue's own
 * loops (reaper, promotion) sleep on the same clock: count them in.
 */
export function parked(clock: MockClock, sleepers: number): Promise<true> {
  return waitFor(() => clock.pendingSleepers === sleepers, `${sleepers} sleepers on the mock clock`);
}
