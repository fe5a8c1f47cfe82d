/**
 * Reading schedules from the store: through the writer's `Queue` or, in another process (the CLI,
 * a dashboard), a read-only `QueueReader` of the same store.
 */
import { utf8 } from '../bytes.js';
import type { KvPage, KvScanOptions } from '../queue/index.js';
import { checkScheduleName } from './schedule.js';
import { decodeSchedule, SCHEDULES_PREFIX, scheduleKey, type ScheduleInfo } from './schedule-record.js';

/** What schedules are read from: a `Queue` or a `QueueReader`. */
export interface ScheduleSource {
  kvGet(key: Uint8Array): Promise<Uint8Array | undefined>;
  kvScan(prefix: Uint8Array, options?: KvScanOptions): Promise<KvPage>;
}

const PAGE = 500;

/**
 * Every schedule in the store, in name order, with its next and last firing. Rejects with
 * CORRUPT_DATA (reason `undecodable_record`), CLOSED or store errors.
 * @example
 * const reader = await QueueReader.open(store, 'app');
 * for (const s of await listSchedules(reader)) console.log(s.name, s.cron, new Date(s.nextFireMs));
 */
export function listSchedules(source: ScheduleSource): Promise<ScheduleInfo[]> {
  return scanSchedules(source, (e) => {
    throw e;
  });
}

/** Every schedule that decodes; each record that does not goes to `onCorrupt` (which may throw). */
export async function scanSchedules(source: ScheduleSource, onCorrupt: (error: unknown, key: Uint8Array) => void): Promise<ScheduleInfo[]> {
  const out: ScheduleInfo[] = [];
  let cursor: Uint8Array | undefined;
  do {
    const page = await source.kvScan(utf8(SCHEDULES_PREFIX), { limit: PAGE, ...(cursor === undefined ? {} : { cursor }) });
    for (const [key, value] of page.entries) {
      try {
        out.push(decodeSchedule(key, value));
      } catch (e) {
        onCorrupt(e, key);
      }
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return out;
}

/** One schedule, or null. INVALID_ARGUMENT for a bad name; CORRUPT_DATA as `listSchedules`. */
export async function readSchedule(source: ScheduleSource, name: string): Promise<ScheduleInfo | null> {
  checkScheduleName(name);
  const key = scheduleKey(name);
  const bytes = await source.kvGet(key);
  return bytes === undefined ? null : decodeSchedule(key, bytes);
}
