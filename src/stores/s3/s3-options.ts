import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { InvalidConfigError } from '../../core/errors.js';
import { validateListPrefix } from '../../core/objects/keys.js';
import { checkOptions, numberRule, optionNames } from '../../core/options.js';

/** Bounded retries of transient failures: exponential backoff with full jitter. */
export interface S3RetryOptions {
  /** Attempts per request, the first included. Default 6; 1 disables retries. */
  readonly maxAttempts?: number;
  /** Backoff cap before attempt n+1 is `min(maxDelayMs, baseDelayMs * 2^(n-1))`; the wait is uniform in [0, cap). Default 50. */
  readonly baseDelayMs?: number;
  /** Upper bound of one backoff. Default 5000. */
  readonly maxDelayMs?: number;
}

export interface S3ObjectStoreOptions {
  /** The bucket; it must exist and support conditional writes (`If-None-Match`, `If-Match` on PutObject). */
  readonly bucket: string;
  /**
   * Prepended verbatim to every key (`'app/'` stores key `kv/manifest` as `app/kv/manifest`).
   * Empty or a valid list prefix. Default `''`.
   */
  readonly prefix?: string;
  /**
   * A ready SDK client. Prefer `clientConfig`: a client of your own keeps its own settings, so
   * create it with `maxAttempts: 1` (this store retries) and with
   * `requestChecksumCalculation: 'WHEN_REQUIRED'`, `responseChecksumValidation: 'WHEN_REQUIRED'`.
   */
  readonly client?: S3Client;
  /**
   * Settings for the client this store creates on first use: `region`, `endpoint`,
   * `credentials`, `forcePathStyle` (MinIO and most emulators). The store adds
   * `maxAttempts: 1` and `WHEN_REQUIRED` checksums.
   */
  readonly clientConfig?: S3ClientConfig;
  readonly retry?: S3RetryOptions;
  /** Deadline of one request attempt, body included; a timed-out attempt is retried. 0 disables. Default 30000. */
  readonly requestTimeoutMs?: number;
}

/**
 * Every S3ObjectStoreOptions / S3RetryOptions name. Adding an option: add its name here too (the
 * compiler insists), or the constructor rejects it as unknown (INVALID_CONFIG naming the nearest name).
 */
export const S3_STORE_OPTION_NAMES = optionNames<S3ObjectStoreOptions>({ bucket: true, prefix: true, client: true, clientConfig: true, retry: true, requestTimeoutMs: true });
export const S3_RETRY_OPTION_NAMES = optionNames<S3RetryOptions>({ maxAttempts: true, baseDelayMs: true, maxDelayMs: true });

/** The options after defaults and checks (no entry point exports it). */
export interface ResolvedS3StoreOptions {
  readonly bucket: string;
  readonly prefix: string;
  readonly client: S3Client | undefined;
  readonly clientConfig: S3ClientConfig;
  readonly retry: Required<S3RetryOptions>;
  readonly requestTimeoutMs: number;
}

/** Defaults of {@link S3RetryOptions}. */
export const DEFAULT_S3_RETRY: Required<S3RetryOptions> = { maxAttempts: 6, baseDelayMs: 50, maxDelayMs: 5000 };
/** Default of `requestTimeoutMs`. */
export const DEFAULT_S3_REQUEST_TIMEOUT_MS = 30_000;

function number(option: string, value: number | undefined, fallback: number, min: number, integer = false): number {
  if (value === undefined) return fallback;
  const rule = numberRule(value, { min, integer });
  if (rule !== undefined) throw new InvalidConfigError(`${option} ${rule}. option=${option} value=${String(value)}`, { option });
  return value;
}

/** Validates the options in one place. Throws INVALID_CONFIG naming the option. */
export function resolveS3StoreOptions(options: S3ObjectStoreOptions): ResolvedS3StoreOptions {
  checkOptions(options ?? null, S3_STORE_OPTION_NAMES, 's3 store');
  checkOptions(options.retry, S3_RETRY_OPTION_NAMES, 's3 store retry');
  if (typeof options?.bucket !== 'string' || options.bucket === '') {
    throw new InvalidConfigError('s3 store needs a bucket. option=bucket', { option: 'bucket' });
  }
  const prefix = options.prefix ?? '';
  try {
    if (typeof prefix !== 'string') throw new Error('not a string');
    validateListPrefix(prefix);
  } catch {
    throw new InvalidConfigError(`prefix must be empty or a valid key prefix. option=prefix value=${JSON.stringify(String(prefix))}`, { option: 'prefix' });
  }
  if (options.client !== undefined && options.clientConfig !== undefined) {
    throw new InvalidConfigError('pass either client or clientConfig, not both. option=client', { option: 'client' });
  }
  const retry = options.retry ?? {};
  return {
    bucket: options.bucket,
    prefix,
    client: options.client,
    clientConfig: {
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...options.clientConfig,
      // Retries are ours: only then can a conditional put tell that an earlier attempt may have landed.
      maxAttempts: 1,
    },
    retry: {
      maxAttempts: number('retry.maxAttempts', retry.maxAttempts, DEFAULT_S3_RETRY.maxAttempts, 1, true),
      baseDelayMs: number('retry.baseDelayMs', retry.baseDelayMs, DEFAULT_S3_RETRY.baseDelayMs, 0),
      maxDelayMs: number('retry.maxDelayMs', retry.maxDelayMs, DEFAULT_S3_RETRY.maxDelayMs, 0),
    },
    requestTimeoutMs: number('requestTimeoutMs', options.requestTimeoutMs, DEFAULT_S3_REQUEST_TIMEOUT_MS, 0),
  };
}
