/**
 * The one logger shape of the queue, the workflow runtime and the queue reader (`logger` option
 * of each), and how an option value becomes the sink the modules write to.
 *
 * Levels: `error` for what lost work or failed a run (a dead-lettered step), `warn` for what
 * recovered or will retry (a step retry, a corrupt memo entry recomputed, a failed sweep),
 * `info` for run outcomes, `debug` for per-step detail. The default (`consoleLogger`) prints
 * warn and error to the console and drops info and debug; `logger: false` silences everything.
 */
import { InvalidConfigError } from './errors.js';

/** Structured context of a log line (run id, step, attempt, error message, ...). */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * Where log lines go. Every method is optional: a missing level is dropped. `console` fits as is
 * (it then also prints info and debug); for pino, whose argument order is (fields, message),
 * pass `{ warn: (m, f) => log.warn(f, m), error: (m, f) => log.error(f, m), ... }`.
 */
export interface Logger {
  debug?(message: string, fields?: LogFields): void;
  info?(message: string, fields?: LogFields): void;
  warn?(message: string, fields?: LogFields): void;
  error?(message: string, fields?: LogFields): void;
}

/** The `logger` option of `Queue.open`, `QueueReader.open` and `WorkflowRuntime`: a `Logger`, or `false` for none. */
export type LoggerOption = Logger | false;

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];

/**
 * What the modules write to (no entry point exports it): every level present, never throws. `detail` is a fields
 * object, or anything else (usually a caught error), which is passed on as `{ error: detail }`.
 */
export type LogSink = Readonly<Record<Level, (message: string, detail?: unknown) => void>>;

function isPlainObject(value: unknown): value is LogFields {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value === null) return String(value);
  if (value instanceof Error) return formatValue(value.message || value.name);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * One console line: `[taquba] message. key=value ...`, then a `stack` field on the next lines;
 * an Error value is also handed to the console whole (so Node prints its stack and cause).
 */
function writeConsole(write: (...args: unknown[]) => void, message: string, fields: LogFields | undefined): void {
  let line = `[taquba] ${message}`;
  let stack: string | undefined;
  const errors: Error[] = [];
  const pairs: string[] = [];
  for (const [k, v] of Object.entries(fields ?? {})) {
    if (v === undefined) continue;
    if (k === 'stack' && typeof v === 'string') {
      stack = v;
      continue;
    }
    if (v instanceof Error) errors.push(v);
    pairs.push(`${k}=${formatValue(v)}`);
  }
  if (pairs.length > 0) line += `${/[.:]$/.test(message) ? '' : '.'} ${pairs.join(' ')}`;
  if (stack !== undefined) line += `\n${stack}`;
  if (errors.length > 0 && stack === undefined) write(line, ...errors);
  else write(line);
}

/** The default logger: warn and error to the console (prefixed `[taquba]`), info and debug dropped. */
export const consoleLogger: Logger = {
  warn: (message, fields) => writeConsole((...a) => console.warn(...a), message, fields),
  error: (message, fields) => writeConsole((...a) => console.error(...a), message, fields),
};

const SILENT: LogSink = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * @internal Resolves a `logger` option: undefined ⇒ `consoleLogger`, false ⇒ silent, an object
 * whose present levels are functions ⇒ that logger. Anything else throws INVALID_CONFIG naming
 * `option`. The sink calls the logger's methods on the logger (`this` kept) and swallows what
 * they throw: a failing logger must not turn a settlement into a stuck claim.
 */
export function resolveLogger(value: unknown, option = 'logger'): LogSink {
  if (value === false) return SILENT;
  const logger = value === undefined ? consoleLogger : value;
  if (typeof logger !== 'object' || logger === null) throw badLogger(option, value);
  for (const level of LEVELS) {
    const method = (logger as Record<string, unknown>)[level];
    if (method !== undefined && typeof method !== 'function') throw badLogger(option, value, level);
  }
  const sink = {} as Record<Level, (message: string, detail?: unknown) => void>;
  for (const level of LEVELS) {
    const method = (logger as Record<string, unknown>)[level] as ((message: string, fields?: LogFields) => void) | undefined;
    sink[level] = method === undefined ? SILENT[level] : (message, detail) => {
      try {
        if (detail === undefined) method.call(logger, message);
        else method.call(logger, message, isPlainObject(detail) ? detail : { error: detail });
      } catch {
        // A logger that throws loses its line, nothing else.
      }
    };
  }
  return sink;
}

function badLogger(option: string, value: unknown, level?: Level): InvalidConfigError {
  const shown = typeof value === 'object' && value !== null ? 'object' : typeof value === 'string' ? JSON.stringify(value) : String(value);
  const what = level === undefined ? `${option} must be a logger object (debug/info/warn/error methods) or false` : `${option}.${level} must be a function`;
  return new InvalidConfigError(`${what}. ${option}=${shown}`, { option, ...(level === undefined ? {} : { level }) });
}

/**
 * @internal The fields of a caught error: its message, and its stack when it is not a
 * `StepError`-like verdict (`withStack`), so an unexpected throw can be traced.
 */
export function errorFields(thrown: unknown, withStack: boolean): { error: string; stack?: string } {
  const message = thrown instanceof Error ? thrown.message || thrown.name : String(thrown);
  if (withStack && thrown instanceof Error && typeof thrown.stack === 'string') return { error: message, stack: thrown.stack };
  return { error: message };
}
