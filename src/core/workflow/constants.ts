/** Public constants of the workflow layer: reserved names, limits and option defaults. */

/** Header carrying the run id on every step and notification job. */
export const HEADER_RUN_ID = 'workflow.run_id';
/** Header carrying the zero-based step number (decimal) on every step job. */
export const HEADER_STEP = 'workflow.step';
/** Header marking a terminal-notification job (value `"1"`). */
export const HEADER_TERMINAL = 'workflow.terminal';
/** Header of a step scheduled as a signal waiter: the correlation key it waits on. */
export const HEADER_SIGNAL_WAIT = 'workflow.signal_wait';
/** Header of a step whose signal was consumed for it at registration (value `"1"`). */
export const HEADER_SIGNAL_DELIVERED = 'workflow.signal_delivered';
/** Header prefix reserved for the runtime: submissions may not use it, runners never see it. */
export const RESERVED_HEADER_PREFIX = 'workflow.';
/** Caller-KV key prefix reserved for the runtime's own records. */
export const RESERVED_KV_PREFIX = 'workflow/';
/** Run ids are 1 to this many characters of `[A-Za-z0-9_-]`. */
export const MAX_RUN_ID_LEN = 128;

export const DEFAULT_QUEUE_NAME = 'workflow-steps';
export const DEFAULT_MEMO_PREFIX = 'workflow-memo';
export const DEFAULT_MAX_CONCURRENT_STEPS = 16;
export const DEFAULT_POLL_INTERVAL_MS = 250;
/** Default `commandPollMs`: how often a running runtime looks in its command inbox. */
export const DEFAULT_COMMAND_POLL_MS = 200;
/** Default `commandRetentionMs`: how long a command's answer is kept for a retry to find. */
export const DEFAULT_COMMAND_RETENTION_MS = 24 * 60 * 60 * 1000;

/** `RunOutcome.error` of a run whose step was dead-lettered outside the worker and had no last error. */
export const RECONCILED_FALLBACK_ERROR = 'step dead-lettered outside the worker';
