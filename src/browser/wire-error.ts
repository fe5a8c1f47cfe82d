/**
 * Errors as plain data and back. The library's error family keeps its class, `code`, `details`
 * and `cause` chain across a structured-clone boundary (Worker, BroadcastChannel): `toWireError`
 * ships `{name, code, message, details, cause}`, `fromWireError` rebuilds the class registered
 * for that name (or, failing that, for the code), so `instanceof InputMismatchError` and
 * `isTaqubaError(e, 'INPUT_MISMATCH')` both hold on the receiving side. Nothing here is specific
 * to the browser; it could live in core/errors.ts.
 */
import {
  AlreadyExistsError,
  ClaimLostError,
  ClosedError,
  ConflictError,
  CorruptDataError,
  FencedError,
  InternalError,
  InvalidArgumentError,
  InvalidConfigError,
  NotFoundError,
  PreconditionFailedError,
  StoreLockedError,
  StorePermissionError,
  StoreUnavailableError,
  TaqubaError,
  UnsupportedPlatformError,
  type ErrorCode,
  type ErrorDetails,
} from '../core/errors.js';
import { InputMismatchError } from '../core/workflow/errors.js';
import { NonDeterminismError, RunFailedError, StepFailedError } from '../core/workflow/functions/errors.js';
import { JobFailedError, type JobFailureReason } from '../core/jobs/index.js';
import { StepError } from '../core/workflow/steps/step-error.js';
import type { WireError } from './protocol.js';

/** Causes deeper than this are cut (a cycle or a very long chain must not blow the message up). */
const MAX_CAUSE_DEPTH = 8;

type TaqubaErrorClass = abstract new (...args: never[]) => TaqubaError;

/** Each error class by its `name`, with the code it carries. */
const CLASSES: Readonly<Record<string, { readonly cls: TaqubaErrorClass; readonly code: ErrorCode }>> = {
  InvalidArgumentError: { cls: InvalidArgumentError, code: 'INVALID_ARGUMENT' },
  InvalidConfigError: { cls: InvalidConfigError, code: 'INVALID_CONFIG' },
  PreconditionFailedError: { cls: PreconditionFailedError, code: 'PRECONDITION_FAILED' },
  FencedError: { cls: FencedError, code: 'FENCED' },
  ClosedError: { cls: ClosedError, code: 'CLOSED' },
  ConflictError: { cls: ConflictError, code: 'CONFLICT' },
  CorruptDataError: { cls: CorruptDataError, code: 'CORRUPT_DATA' },
  StoreUnavailableError: { cls: StoreUnavailableError, code: 'STORE_UNAVAILABLE' },
  StorePermissionError: { cls: StorePermissionError, code: 'STORE_PERMISSION' },
  NotFoundError: { cls: NotFoundError, code: 'NOT_FOUND' },
  AlreadyExistsError: { cls: AlreadyExistsError, code: 'ALREADY_EXISTS' },
  StoreLockedError: { cls: StoreLockedError, code: 'LOCKED' },
  ClaimLostError: { cls: ClaimLostError, code: 'CLAIM_LOST' },
  InternalError: { cls: InternalError, code: 'INTERNAL' },
  UnsupportedPlatformError: { cls: UnsupportedPlatformError, code: 'UNSUPPORTED_PLATFORM' },
  InputMismatchError: { cls: InputMismatchError, code: 'INPUT_MISMATCH' },
  JobFailedError: { cls: JobFailedError, code: 'JOB_FAILED' },
  StepFailedError: { cls: StepFailedError, code: 'STEP_FAILED' },
  RunFailedError: { cls: RunFailedError, code: 'RUN_FAILED' },
  NonDeterminismError: { cls: NonDeterminismError, code: 'NON_DETERMINISTIC' },
};

/** The class a bare code maps to, when the name is unknown (a subclass from a newer version). */
const BY_CODE = new Map<ErrorCode, TaqubaErrorClass>(Object.values(CLASSES).map(({ cls, code }) => [code, cls]));

function isPrimitive(v: unknown): v is string | number | boolean | null {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** Details reduced to what survives a structured clone unchanged. */
function plainDetails(details: ErrorDetails): ErrorDetails {
  const out: ErrorDetails = {};
  for (const [k, v] of Object.entries(details)) if (v === undefined || isPrimitive(v)) out[k] = v;
  return out;
}

/** `value` when the structured clone keeps it, else undefined (a function, a DOM node, ...). */
function cloneable(value: unknown): unknown {
  if (value === undefined || typeof structuredClone !== 'function') return undefined;
  try {
    return structuredClone(value);
  } catch {
    return undefined;
  }
}

/** The fields of a `JobFailedError` rebuilt from its details (the class's constructor did not run). */
function restoreJobFailure(error: TaqubaError, jobError: unknown): void {
  const d = error.details;
  Object.assign(error as unknown as Record<string, unknown>, {
    error: jobError,
    reason: (typeof d['reason'] === 'string' ? d['reason'] : 'error') as JobFailureReason,
    jobId: typeof d['jobId'] === 'string' ? d['jobId'] : '',
    jobName: typeof d['jobName'] === 'string' ? d['jobName'] : '',
  });
}

const text = (d: ErrorDetails, key: string): string => (typeof d[key] === 'string' ? (d[key] as string) : '');

/** The fields of a workflow function's error rebuilt from its details (the class's constructor did not run). */
function restoreFunctionError(error: TaqubaError): void {
  const d = error.details;
  if (error instanceof StepFailedError) {
    Object.assign(error, { stepName: text(d, 'step'), attempts: typeof d['attempts'] === 'number' ? d['attempts'] : 0, lastError: text(d, 'lastError') });
  } else if (error instanceof RunFailedError) {
    Object.assign(error, { runId: text(d, 'runId'), status: d['status'] === 'cancelled' ? 'cancelled' : 'failed', error: typeof d['error'] === 'string' ? d['error'] : null });
  }
}

/** `error` (anything thrown) as a structured-cloneable record. */
export function toWireError(error: unknown, depth = 0): WireError {
  const cause = (e: { cause?: unknown }): WireError | undefined =>
    e.cause === undefined || depth >= MAX_CAUSE_DEPTH ? undefined : toWireError(e.cause, depth + 1);
  if (error instanceof TaqubaError) {
    const jobError = error instanceof JobFailedError ? cloneable(error.error) : undefined;
    return {
      name: error.name,
      message: error.message,
      code: error.code,
      details: plainDetails(error.details),
      stack: error.stack,
      cause: cause(error),
      ...(jobError === undefined ? {} : { jobError }),
    };
  }
  if (error instanceof StepError) {
    return { name: 'StepError', message: error.message, stepErrorKind: error.kind, stack: error.stack, cause: cause(error) };
  }
  if (error instanceof Error || (typeof DOMException !== 'undefined' && error instanceof DOMException)) {
    const e = error as Error;
    return { name: e.name, message: e.message, stack: e.stack, cause: cause(e) };
  }
  if (isPrimitive(error) || error === undefined) return { name: 'NonError', message: String(error), value: error ?? null };
  return { name: 'NonError', message: Object.prototype.toString.call(error) };
}

function setStack(error: Error, stack: string | undefined): void {
  if (stack === undefined) return;
  Object.defineProperty(error, 'stack', { value: stack, writable: true, configurable: true });
}

/**
 * Rebuilds an error from its record: the library class registered under `name` (if its code
 * matches), else the class of `code`, else a `TaqubaError` with that code; a `StepError` with
 * its kind; anything else as an `Error` carrying the original name. Stacks are the remote ones.
 */
export function fromWireError(wire: WireError): unknown {
  const cause = wire.cause === undefined ? undefined : fromWireError(wire.cause);
  if (wire.name === 'NonError' && 'value' in wire) return wire.value;
  if (wire.code !== undefined) {
    const entry = CLASSES[wire.name];
    const cls = entry && entry.code === wire.code ? entry.cls : BY_CODE.get(wire.code) ?? TaqubaError;
    // Run the base constructor with the subclass as new.target: the prototype (and so
    // `instanceof`) is the subclass's, and its own constructor's argument shape does not matter.
    const error = Reflect.construct(TaqubaError, [wire.code, wire.message, { details: wire.details ?? {}, cause }], cls) as TaqubaError;
    error.name = wire.name;
    setStack(error, wire.stack);
    if (error instanceof JobFailedError) restoreJobFailure(error, wire.jobError);
    restoreFunctionError(error);
    return error;
  }
  if (wire.stepErrorKind !== undefined) {
    const error = new StepError(wire.stepErrorKind, wire.message, cause === undefined ? undefined : { cause });
    setStack(error, wire.stack);
    return error;
  }
  const error = new Error(wire.message, cause === undefined ? undefined : { cause });
  error.name = wire.name;
  setStack(error, wire.stack);
  return error;
}
