/**
 * Errors the CLI reports: one line on stderr, a stable code, an optional hint, an exit code.
 * Library errors keep their own code (`LOCKED`, `CORRUPT_DATA`, ...); the CLI adds `USAGE` (bad
 * arguments), `NOT_A_STORE` (the location holds no taquba store) and `UNKNOWN_QUEUE` (`--queue`
 * names no queue of the store; exit code 2, as a bad argument).
 */
import { isTaqubaError } from '../core/errors.js';

/** Exit codes: 1 for any failure at run time, 2 for bad arguments (USAGE, INVALID_ARGUMENT, INVALID_CONFIG). */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint: string | null = null,
    readonly exitCode: number = EXIT_FAILURE,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CliError';
  }
}

export const usageError = (message: string, hint: string | null = null): CliError => new CliError('USAGE', message, hint, EXIT_USAGE);

/** Hints for library errors a user can act on. */
function hintFor(code: string): string | null {
  switch (code) {
    case 'CORRUPT_DATA':
      return 'the store is damaged; restore it from a copy, or point --path at another engine';
    case 'STORE_PERMISSION':
      return 'check the credentials (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) or the file permissions';
    case 'STORE_UNAVAILABLE':
      return 'the store did not answer; check the path, endpoint and network, then try again';
    default:
      return null;
  }
}

/** Any thrown value as a CliError (library errors keep their code; anything else is INTERNAL). */
export function toCliError(e: unknown): CliError {
  if (e instanceof CliError) return e;
  // A bad value the user typed (a run id, a path, a bucket that does not exist) is a usage error like a bad option.
  if (isTaqubaError(e)) return new CliError(e.code, e.message, hintFor(e.code), e.code === 'INVALID_ARGUMENT' || e.code === 'INVALID_CONFIG' ? EXIT_USAGE : EXIT_FAILURE, { cause: e });
  const message = e instanceof Error ? e.message : String(e);
  return new CliError('INTERNAL', message, 'run again with --debug for the stack', EXIT_FAILURE, { cause: e });
}

/** The one line printed for an error (newlines in messages folded so it stays one line). */
export function errorLine(e: CliError): string {
  const oneLine = (s: string): string => s.replace(/\s*\n\s*/g, ' ');
  return `taquba: ${e.code}: ${oneLine(e.message)}${e.hint ? ` (hint: ${oneLine(e.hint)})` : ''}`;
}
