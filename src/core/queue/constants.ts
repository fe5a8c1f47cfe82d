/** Public constants of the queue layer. */

/** Claimed before NORMAL and LOW. Lower numbers are claimed first; any u32 is allowed. */
export const PRIORITY_HIGH = 100;
/** The default priority. */
export const PRIORITY_NORMAL = 1000;
/** Claimed after HIGH and NORMAL. */
export const PRIORITY_LOW = 10000;

/** Hard cap on one caller KV value, in bytes (KV values are never offloaded). */
export const MAX_KV_VALUE_SIZE = 256 * 1024;
/** Payloads strictly larger than this many bytes go to their own object by default. */
export const DEFAULT_PAYLOAD_OFFLOAD_THRESHOLD = 256 * 1024;
/** Queue names are at most this many UTF-8 bytes (one length byte in keys). */
export const MAX_QUEUE_NAME_LEN = 255;
/** Caller-supplied job ids are 1 to this many bytes of `[A-Za-z0-9_-]`. */
export const MAX_JOB_ID_LEN = 128;

/** Added by `LeaseHandle.ensureAtLeast` on top of the requested time, for settlement. */
export const SETTLEMENT_MARGIN_MS = 5_000;
/** At most this many notify-one wakeups are issued for one batch of inserts. */
export const MAX_WAKEUPS_PER_BATCH = 64;

export const DEFAULT_MAX_ATTEMPTS = 3;
/** Interrupted deliveries (process exit, crash, reload) allowed before a job dead-letters. */
export const DEFAULT_MAX_INTERRUPTIONS = 20;
export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_RETRY_BACKOFF_BASE_MS = 1_000;
export const DEFAULT_RETRY_BACKOFF_MAX_MS = 300_000;
export const DEFAULT_DEAD_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
export const DEFAULT_REAPER_INTERVAL_MS = 5_000;
export const DEFAULT_SCHEDULER_INTERVAL_MS = 1_000;
export const DEFAULT_POLL_INTERVAL_MS = 1_000;
export const DEFAULT_READER_POLL_INTERVAL_MS = 10_000;

/** `lastError` of a job dead-lettered because its deliveries were interrupted `count` times. */
export function interruptedTooOftenError(count: number): string {
  return `interrupted ${count} ${count === 1 ? 'time' : 'times'} (process exit, crash or abandoned delivery)`;
}
/** `lastError` of a job dead-lettered because its lease expired on the final attempt. */
export const LEASE_EXPIRED_ERROR = 'lease expired';
