/**
 * `StepError`: how a runner reports an infrastructure failure (as opposed to a `fail` verdict).
 * Transient errors retry with the queue's backoff until the step's attempts run out, then
 * dead-letter; permanent errors dead-letter at once. Both fail the run.
 */
import { isTaqubaError } from '../../errors.js';
import { isPermanentCode } from '../errors.js';

export type StepErrorKind = 'transient' | 'permanent';

const BRAND = Symbol.for('taquba-workflow.step-error');

export class StepError extends Error {
  readonly kind: StepErrorKind;

  constructor(kind: StepErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.name = 'StepError';
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** Retry with backoff up to the step's max attempts, then dead-letter. */
  static transient(messageOrCause: string | Error): StepError {
    return build('transient', messageOrCause);
  }

  /** Dead-letter now; the run fails. */
  static permanent(messageOrCause: string | Error): StepError {
    return build('permanent', messageOrCause);
  }

  /**
   * Classifies anything a runner or hook threw: a `StepError` keeps its kind; a library error is
   * permanent when its code says retrying cannot help (INVALID_ARGUMENT, INPUT_MISMATCH,
   * CORRUPT_DATA, ...); every other error is transient.
   */
  static from(thrown: unknown): StepError {
    if (thrown instanceof StepError) return thrown;
    if (isTaqubaError(thrown)) return new StepError(isPermanentCode(thrown.code) ? 'permanent' : 'transient', thrown.message || thrown.code, { cause: thrown });
    if (thrown instanceof Error) return new StepError('transient', thrown.message || thrown.name, { cause: thrown });
    return new StepError('transient', String(thrown), { cause: thrown });
  }

  get isPermanent(): boolean {
    return this.kind === 'permanent';
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

function build(kind: StepErrorKind, messageOrCause: string | Error): StepError {
  if (typeof messageOrCause === 'string') return new StepError(kind, messageOrCause);
  return new StepError(kind, messageOrCause.message || messageOrCause.name, { cause: messageOrCause });
}
