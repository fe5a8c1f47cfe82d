/**
 * One error family for the whole library. The `code` is the API; messages are for humans and may
 * change. Codes are defined once here and never renamed or reused.
 *
 * `instanceof` works across realms (worker/page, two copies of the package) through a
 * `Symbol.for` brand, and `isTaqubaError(e, code?)` is the guard to prefer in application code.
 */

/** Every stable error code. Add one only when a caller would handle it differently. */
export type ErrorCode =
  | 'INVALID_ARGUMENT'
  | 'INVALID_CONFIG'
  | 'PRECONDITION_FAILED'
  | 'FENCED'
  | 'CLOSED'
  | 'CONFLICT'
  | 'CORRUPT_DATA'
  | 'STORE_UNAVAILABLE'
  | 'STORE_PERMISSION'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'LOCKED'
  | 'CLAIM_LOST'
  | 'INPUT_MISMATCH'
  | 'JOB_FAILED'
  | 'TIMEOUT'
  | 'CANCELLED'
  | 'UNSUPPORTED_PLATFORM'
  | 'STEP_FAILED'
  | 'RUN_FAILED'
  | 'NON_DETERMINISTIC'
  | 'INTERNAL';

const BRAND = Symbol.for('taquba-workflow.error');

/** Plain data attached to an error; must stay structured-cloneable. */
export type ErrorDetails = Record<string, string | number | boolean | null | undefined>;

export class TaqubaError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, options: { details?: ErrorDetails; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? {};
    this.name = 'TaqubaError';
    Object.defineProperty(this, BRAND, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    // Subclasses keep normal prototype checks; the base class also accepts branded errors from
    // another realm (a worker, or a second copy of the package).
    if (this !== TaqubaError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

/** True when `e` is a library error, optionally with the given code. */
export function isTaqubaError(e: unknown, code?: ErrorCode): e is TaqubaError {
  return e instanceof TaqubaError && (code === undefined || e.code === code);
}

/** A bad argument to a call. Fix the call; never retry. */
export class InvalidArgumentError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails) {
    super('INVALID_ARGUMENT', message, { details });
    this.name = 'InvalidArgumentError';
  }
}

/** Bad options at open time. */
export class InvalidConfigError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails) {
    super('INVALID_CONFIG', message, { details });
    this.name = 'InvalidConfigError';
  }
}

/** A conditional object-store write whose precondition did not hold. */
export class PreconditionFailedError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails, cause?: unknown) {
    super('PRECONDITION_FAILED', message, { details, cause });
    this.name = 'PreconditionFailedError';
  }
}

/** A newer writer owns the store. Stop using this instance; open a new one if you must write. */
export class FencedError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails, cause?: unknown) {
    super('FENCED', message, { details, cause });
    this.name = 'FencedError';
  }
}

/** The instance was closed, or failed and poisoned itself (details.reason says which). */
export class ClosedError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails, cause?: unknown) {
    super('CLOSED', message, { details, cause });
    this.name = 'ClosedError';
  }
}

/** An optimistic transaction lost a write-write race. Retry the whole transaction. */
export class ConflictError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails) {
    super('CONFLICT', message, { details });
    this.name = 'ConflictError';
  }
}

/** Stored bytes failed their checks. `details.object` names the object. Never a wrong read. */
export class CorruptDataError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails, cause?: unknown) {
    super('CORRUPT_DATA', message, { details, cause });
    this.name = 'CorruptDataError';
  }
}

/** A transient store failure (I/O, network, throttling). Retry after a backoff. */
export class StoreUnavailableError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails, cause?: unknown) {
    super('STORE_UNAVAILABLE', message, { details, cause });
    this.name = 'StoreUnavailableError';
  }
}

/** The store refused: permissions, credentials or quota. */
export class StorePermissionError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails, cause?: unknown) {
    super('STORE_PERMISSION', message, { details, cause });
    this.name = 'StorePermissionError';
  }
}

/** A named job, run or key does not exist. */
export class NotFoundError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails) {
    super('NOT_FOUND', message, { details });
    this.name = 'NotFoundError';
  }
}

/**
 * A caller-chosen id is already taken (for example a job id override still indexed by a job in
 * any state). The caller decides: look the existing item up, or pick another id.
 */
export class AlreadyExistsError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails) {
    super('ALREADY_EXISTS', message, { details });
    this.name = 'AlreadyExistsError';
  }
}

/**
 * Another live process (or tab) holds the single-writer lock of this store. Fail fast rather
 * than fence each other mid-run: stop, or open read-only.
 */
export class StoreLockedError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails, cause?: unknown) {
    super('LOCKED', message, { details, cause });
    this.name = 'StoreLockedError';
  }
}

/** A claim can no longer settle: its lease was reaped, or a newer claim superseded it. */
export class ClaimLostError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails) {
    super('CLAIM_LOST', message, { details });
    this.name = 'ClaimLostError';
  }
}

/** An invariant did not hold: a bug. The instance should be considered unusable. */
export class InternalError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails, cause?: unknown) {
    super('INTERNAL', message, { details, cause });
    this.name = 'InternalError';
  }
}

/** An adapter was opened where its platform API is missing. */
export class UnsupportedPlatformError extends TaqubaError {
  constructor(message: string, details?: ErrorDetails, cause?: unknown) {
    super('UNSUPPORTED_PLATFORM', message, { details, cause });
    this.name = 'UnsupportedPlatformError';
  }
}

/** Throws an INTERNAL error naming the invariant when `condition` is false. */
export function invariant(condition: unknown, name: string, details?: ErrorDetails): asserts condition {
  if (!condition) throw new InternalError(`invariant violated. name=${name}`, { invariant: name, ...details });
}
