/**
 * Maps what the AWS SDK throws (service errors with an HTTP status and an S3 error code, network
 * errors from Node or `fetch`, our own request timeouts) to the library's error codes. The SDK
 * error is always kept as `cause`; the S3 code and status go into `details`.
 */
import {
  InvalidArgumentError,
  InvalidConfigError,
  isTaqubaError,
  StorePermissionError,
  StoreUnavailableError,
  TaqubaError,
  UnsupportedPlatformError,
  type ErrorDetails,
} from '../../core/errors.js';

/** How the store reacts to a failed request. */
export type S3FailureKind =
  /** 404 NoSuchKey (or a bare 404 from HEAD). */
  | 'not-found'
  /** 412, 409 ConditionalRequestConflict: a conditional write's precondition did not hold. */
  | 'precondition'
  /** 416: a range starting at or after the end of the object. */
  | 'invalid-range'
  /** Throttling, 5xx, network errors and timeouts: retried with backoff. */
  | 'transient'
  /** 403 and credential refusals. */
  | 'permission'
  /** The bucket, region or endpoint is wrong. */
  | 'config'
  /** The server does not implement what we asked for (for example conditional writes). */
  | 'unsupported'
  /** The key is unacceptable to S3 (for example too long once prefixed). */
  | 'invalid-argument'
  /** Anything else: a typed STORE_UNAVAILABLE that is not retried. */
  | 'other';

/** What we could read off a thrown value. */
export interface S3ErrorFacts {
  readonly status?: number;
  /** The S3 error code (`NoSuchKey`, `SlowDown`, ...) or, for network errors, the errno. */
  readonly code?: string;
  /** Attempts the SDK itself made (more than 1 only with a client that retries on its own). */
  readonly sdkAttempts: number;
}

/** Thrown by the store when its own per-request deadline fires; always transient. */
export class S3RequestTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`request timed out. timeout_ms=${timeoutMs}`);
    this.name = 'S3RequestTimeout';
  }
}

const PERMISSION_CODES = new Set([
  'AccessDenied',
  'AccountProblem',
  'AllAccessDisabled',
  'CredentialsProviderError',
  'ExpiredToken',
  'InvalidAccessKeyId',
  'InvalidToken',
  'QuotaExceeded',
  'SignatureDoesNotMatch',
  'TokenRefreshRequired',
]);
const TRANSIENT_CODES = new Set([
  'InternalError',
  'OperationAborted',
  'RequestLimitExceeded',
  'RequestTimeout',
  'RequestTimeoutException',
  'ServiceUnavailable',
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'TimeoutError',
  'TooManyRequests',
  'TooManyRequestsException',
]);
const CONFIG_CODES = new Set(['AuthorizationHeaderMalformed', 'IllegalLocationConstraintException', 'InvalidBucketName', 'NoSuchBucket', 'PermanentRedirect']);

/** Reads status, code and SDK attempt count off anything thrown by `client.send`. */
export function s3ErrorFacts(e: unknown): S3ErrorFacts {
  const err = (typeof e === 'object' && e !== null ? e : {}) as {
    name?: unknown;
    code?: unknown;
    Code?: unknown;
    $metadata?: { httpStatusCode?: unknown; attempts?: unknown };
  };
  const status = typeof err.$metadata?.httpStatusCode === 'number' ? err.$metadata.httpStatusCode : undefined;
  const attempts = typeof err.$metadata?.attempts === 'number' ? err.$metadata.attempts : 1;
  let code: string | undefined;
  if (typeof err.Code === 'string') code = err.Code;
  else if (status !== undefined && typeof err.name === 'string') code = err.name;
  else if (typeof err.code === 'string') code = err.code; // Node errno (ECONNRESET, ...)
  else if (typeof err.name === 'string') code = err.name;
  return { status, code, sdkAttempts: attempts };
}

/** Decides how to treat a failed request; see {@link S3FailureKind}. */
export function classifyS3Error(e: unknown): S3FailureKind {
  if (e instanceof S3RequestTimeout) return 'transient';
  if (isTaqubaError(e)) return 'other';
  const { status, code } = s3ErrorFacts(e);
  if (code === 'NoSuchKey' || (status === 404 && (code === 'NotFound' || code === undefined))) return 'not-found';
  if (status === 412 || code === 'PreconditionFailed' || code === 'ConditionalRequestConflict') return 'precondition';
  if (status === 416 || code === 'InvalidRange') return 'invalid-range';
  if (code !== undefined && PERMISSION_CODES.has(code)) return 'permission';
  if (code !== undefined && CONFIG_CODES.has(code)) return 'config';
  if (status === 501 || code === 'NotImplemented') return 'unsupported';
  if (code === 'KeyTooLongError') return 'invalid-argument';
  if (status === 403) return 'permission';
  if (status === 301 || status === 307) return 'config';
  if ((code !== undefined && TRANSIENT_CODES.has(code)) || status === 429 || (status !== undefined && status >= 500)) return 'transient';
  if (status === undefined) {
    // No HTTP response at all. A few of these are configuration mistakes, never worth a retry.
    const message = e instanceof Error ? e.message : String(e);
    if (/region is missing|invalid region/i.test(message)) return 'config';
    return 'transient'; // a network failure: refused, reset, dropped mid-body, fetch failed...
  }
  return 'other';
}

/**
 * The library error for a failed request that is not handled in place (not-found, precondition
 * and invalid-range are). Library errors pass through unchanged.
 */
export function toS3StoreError(op: string, subject: ErrorDetails, e: unknown, attempts: number): TaqubaError {
  if (isTaqubaError(e)) return e;
  const { status, code } = s3ErrorFacts(e);
  const details: ErrorDetails = { op, ...subject, s3Code: code, status, attempts };
  const where = Object.entries(subject)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
  const suffix = `${where} s3_code=${code ?? 'none'} status=${status ?? 'none'}`;
  switch (classifyS3Error(e)) {
    case 'permission':
      return new StorePermissionError(`s3 ${op} refused. ${suffix}`, details, e);
    case 'config':
      return withCause(new InvalidConfigError(`s3 ${op} failed: check bucket, region and endpoint. ${suffix}`, details), e);
    case 'unsupported':
      return withCause(new UnsupportedPlatformError(`s3 server does not implement this request (conditional writes?). ${suffix}`, details), e);
    case 'invalid-argument':
      return withCause(new InvalidArgumentError(`s3 rejected the key. ${suffix}`, details), e);
    case 'transient':
      return new StoreUnavailableError(`s3 ${op} failed after ${attempts} attempt(s). ${suffix}`, { ...details, retryable: true }, e);
    default:
      return new StoreUnavailableError(`s3 ${op} failed. ${suffix}`, { ...details, retryable: false }, e);
  }
}

function withCause<E extends Error>(error: E, cause: unknown): E {
  Object.defineProperty(error, 'cause', { value: cause, configurable: true, writable: true });
  return error;
}
