import type { S3Client } from '@aws-sdk/client-s3';
import { systemClock } from '../../core/clock.js';
import { InvalidConfigError, PreconditionFailedError, StoreUnavailableError, type ErrorDetails } from '../../core/errors.js';
import { validateGetRange, validateListPrefix, validateObjectKey, validatePutData } from '../../core/objects/keys.js';
import type { GetOptions, ListOptions, ObjectInfo, ObjectStore, ObjectVersion, PutOptions, StoredObject } from '../../core/objects/object-store.js';
import { classifyS3Error, S3RequestTimeout, s3ErrorFacts, toS3StoreError } from './s3-errors.js';
import { resolveS3StoreOptions, type ResolvedS3StoreOptions, type S3ObjectStoreOptions } from './s3-options.js';
import { loadS3Sdk, type S3Sdk } from './s3-sdk.js';

const EMPTY = new Uint8Array(0);
/** Keys per DeleteObjects request: S3's maximum. */
const DELETE_BATCH = 1000;

/**
 * An ObjectStore on an S3 bucket (AWS S3, Cloudflare R2, MinIO, or any S3-compatible service with
 * conditional writes), through `@aws-sdk/client-s3`. Platform-neutral: the same code runs in Node
 * and, with credentials, in a browser (the bucket's CORS rules must then expose `ETag`).
 *
 * The SDK is an optional peer dependency (`npm install @aws-sdk/client-s3`), loaded with a
 * dynamic `import()` on the first request: importing this module and constructing the store work
 * without it, and the first call then rejects with UNSUPPORTED_PLATFORM
 * (`details.missing: '@aws-sdk/client-s3'`).
 *
 * - Key `k` is stored as `${prefix}${k}`. The version is the object's ETag, which S3 derives from
 *   the bytes: two puts of identical bytes get the same version. Compare-and-swap stays correct
 *   for state-based updates (identical bytes are the identical state), but a caller must not use
 *   a version change to detect "someone wrote" when the bytes may repeat.
 * - put sends `If-None-Match: *` / `If-Match: <etag>`. 412, 409 `ConditionalRequestConflict` and
 *   404 on `If-Match` of a missing key reject with PRECONDITION_FAILED (nothing written).
 * - Throttling (429, 503 SlowDown), 5xx, network errors and timeouts (`requestTimeoutMs`) are
 *   retried with exponential backoff and full jitter, at most `retry.maxAttempts` times, then
 *   reject with STORE_UNAVAILABLE. A retried conditional put may meet its own earlier attempt
 *   (which landed but whose answer was lost): when the retry answers 412, the store reads the
 *   object back and reports success if it holds exactly the bytes sent. If it holds other bytes,
 *   a create-only put rejects with PRECONDITION_FAILED, and an `ifMatch` put with STORE_UNAVAILABLE
 *   and `details.outcome: 'unknown'` (it may have landed and been overwritten since).
 * - list pages through ListObjectsV2 in S3's order, UTF-8 byte order. That equals the contract's
 *   UTF-16 order except between characters U+E000..U+FFFF and astral ones at the same position.
 *
 * Errors: INVALID_ARGUMENT (bad key, prefix or range; key too long for S3; put data not a
 * Uint8Array), INVALID_CONFIG (bad options; no such bucket; wrong region or endpoint; ETag not
 * exposed), PRECONDITION_FAILED,
 * STORE_PERMISSION (403, AccessDenied, InvalidAccessKeyId, SignatureDoesNotMatch, missing
 * credentials), UNSUPPORTED_PLATFORM (501: the server lacks conditional writes; or
 * `@aws-sdk/client-s3` is not installed), STORE_UNAVAILABLE
 * (transient failures after the retries, `details.retryable: true`; unexpected answers,
 * `retryable: false`). `details.s3Code` and `details.status` carry S3's answer; the SDK error is
 * the `cause`.
 *
 * @example
 * const store = new S3ObjectStore({
 *   bucket: 'my-bucket',
 *   prefix: 'app/',
 *   clientConfig: { region: 'eu-west-1' },
 * });
 * const db = await KvDb.open(store);
 */
export class S3ObjectStore implements ObjectStore {
  /** The bucket holding the objects. */
  readonly bucket: string;
  /** Prepended to every key. */
  readonly prefix: string;
  private readonly options: ResolvedS3StoreOptions;
  private clientInstance: S3Client | undefined;
  private sdkLoad: Promise<S3Sdk> | undefined;

  /** Throws INVALID_CONFIG on bad options. Loads no SDK, creates no client and sends nothing. */
  constructor(options: S3ObjectStoreOptions) {
    this.options = resolveS3StoreOptions(options);
    this.bucket = this.options.bucket;
    this.prefix = this.options.prefix;
  }

  /** The SDK client in use: the one passed in, or the one created on the first request (undefined until then). */
  get client(): S3Client | undefined {
    return this.clientInstance ?? this.options.client;
  }

  /**
   * The SDK module and the client, loading the SDK on first use. Rejects with
   * UNSUPPORTED_PLATFORM when `@aws-sdk/client-s3` is not installed (a later call tries again).
   */
  private async connect(): Promise<{ sdk: S3Sdk; client: S3Client }> {
    this.sdkLoad ??= loadS3Sdk().catch((e: unknown) => {
      this.sdkLoad = undefined;
      throw e;
    });
    const sdk = await this.sdkLoad;
    this.clientInstance ??= this.options.client ?? new sdk.S3Client(this.options.clientConfig);
    return { sdk, client: this.clientInstance };
  }

  /** Rejects with INVALID_ARGUMENT, INVALID_CONFIG, STORE_PERMISSION or STORE_UNAVAILABLE. */
  async get(key: string, options?: GetOptions): Promise<StoredObject | undefined> {
    validateObjectKey(key);
    const range = options?.range;
    validateGetRange(key, range);
    // An empty range has no `bytes=a-b` form (S3 would ignore it and send everything).
    if (range?.length === 0) return this.emptyRead(key);
    const { sdk, client } = await this.connect();
    const result = await this.retrying('get', { key }, async (signal) => {
      try {
        const out = await client.send(
          new sdk.GetObjectCommand({
            Bucket: this.bucket,
            Key: this.prefix + key,
            Range: range ? `bytes=${range.offset}-${range.offset + range.length - 1}` : undefined,
          }),
          { abortSignal: signal },
        );
        const bytes = out.Body ? await out.Body.transformToByteArray() : EMPTY;
        if (out.ContentLength !== undefined && bytes.length !== out.ContentLength) {
          throw Object.assign(new Error(`response body truncated. expected=${out.ContentLength} got=${bytes.length}`), { code: 'TruncatedBody' });
        }
        const version = etagOf(out.ETag);
        // A server that ignores Range answers 200 with the whole object: cut the range out here.
        const data = range && out.ContentRange === undefined ? bytes.slice(range.offset, range.offset + range.length) : bytes;
        return { data, version };
      } catch (e) {
        const kind = classifyS3Error(e);
        if (kind === 'not-found') return undefined;
        if (kind === 'invalid-range') return 'past-end' as const;
        throw e;
      }
    });
    // 416: the range starts at or after the end. The contract answers empty bytes and the version.
    return result === 'past-end' ? this.emptyRead(key) : result;
  }

  /**
   * Resolves once S3 acknowledged the write, with the new version (the ETag). Rejects with
   * PRECONDITION_FAILED (nothing written), INVALID_ARGUMENT, INVALID_CONFIG, STORE_PERMISSION,
   * UNSUPPORTED_PLATFORM or STORE_UNAVAILABLE (`details.outcome: 'unknown'` when a retried
   * compare-and-swap cannot tell whether its first attempt landed).
   */
  async put(key: string, data: Uint8Array, options?: PutOptions): Promise<{ version: ObjectVersion }> {
    validateObjectKey(key);
    validatePutData(key, data);
    const body = data.slice(); // our own copy: retries and the read-back compare what was sent
    const createOnly = options?.ifNoneMatch === '*';
    const expected = options?.ifMatch;
    const { sdk, client } = await this.connect();
    type Outcome = { version: ObjectVersion; refused?: undefined } | { version?: undefined; refused: unknown; retried: boolean };
    const outcome = await this.retrying('put', { key }, async (signal, attempt): Promise<Outcome> => {
      try {
        const out = await client.send(
          new sdk.PutObjectCommand({
            Bucket: this.bucket,
            Key: this.prefix + key,
            Body: body,
            ContentLength: body.length,
            IfNoneMatch: createOnly ? '*' : undefined,
            IfMatch: expected,
          }),
          { abortSignal: signal },
        );
        return { version: etagOf(out.ETag) };
      } catch (e) {
        const kind = classifyS3Error(e);
        if ((createOnly || expected !== undefined) && (kind === 'precondition' || (kind === 'not-found' && expected !== undefined))) {
          // Retried (by us or by the SDK): an earlier attempt may be what now fails the precondition.
          return { refused: e, retried: attempt > 1 || s3ErrorFacts(e).sdkAttempts > 1 };
        }
        throw e;
      }
    });
    if (outcome.version !== undefined) return { version: outcome.version };
    if (outcome.retried) return this.settleRetriedPut(key, body, createOnly, outcome.refused);
    throw preconditionFailed(key, createOnly, expected, outcome.refused);
  }

  /** Deleting an absent key succeeds. Rejects with INVALID_ARGUMENT, INVALID_CONFIG, STORE_PERMISSION or STORE_UNAVAILABLE. */
  async delete(key: string): Promise<void> {
    validateObjectKey(key);
    const { sdk, client } = await this.connect();
    await this.retrying('delete', { key }, async (signal) => {
      try {
        await client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }), { abortSignal: signal });
      } catch (e) {
        if (classifyS3Error(e) !== 'not-found') throw e;
      }
    });
  }

  /**
   * Deletes `keys` with DeleteObjects, 1000 a request (S3's limit), in quiet mode (the answer
   * lists only failures). Absent keys succeed. The requests are retried like any other; a key
   * S3 reports as not deleted rejects the call with STORE_UNAVAILABLE (`details.failed`: how
   * many, `details.key` / `s3Code`: the first) once every batch was sent. Rejects with
   * INVALID_ARGUMENT for a bad key before sending anything.
   */
  async deleteMany(keys: readonly string[]): Promise<void> {
    for (const key of keys) validateObjectKey(key);
    if (keys.length === 0) return;
    const { sdk, client } = await this.connect();
    const failed: { key: string; code: string; message: string }[] = [];
    for (let start = 0; start < keys.length; start += DELETE_BATCH) {
      const batch = keys.slice(start, start + DELETE_BATCH);
      const answer = await this.retrying('deleteMany', { key: batch[0], count: batch.length }, (signal) =>
        client.send(
          new sdk.DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Quiet: true, Objects: batch.map((key) => ({ Key: this.prefix + key })) } }),
          { abortSignal: signal },
        ),
      );
      for (const error of answer.Errors ?? []) {
        if (error.Code === 'NoSuchKey') continue;
        failed.push({ key: (error.Key ?? '').slice(this.prefix.length), code: error.Code ?? 'unknown', message: error.Message ?? '' });
      }
    }
    if (failed.length > 0) {
      const first = failed[0]!;
      throw new StoreUnavailableError(`${failed.length} of ${keys.length} deletes failed; first: key=${first.key} s3Code=${first.code} ${first.message}`.trim(), {
        op: 'deleteMany',
        key: first.key,
        s3Code: first.code,
        failed: failed.length,
      });
    }
  }

  /**
   * Yields the objects under `prefix` page by page (1000 a request). Rejects (on iteration) with
   * INVALID_ARGUMENT, INVALID_CONFIG, STORE_PERMISSION or STORE_UNAVAILABLE.
   */
  async *list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> {
    validateListPrefix(prefix);
    const { sdk, client } = await this.connect();
    const fullPrefix = this.prefix + prefix;
    const startAfter = options?.startAfter ? this.prefix + options.startAfter : undefined;
    let token: string | undefined;
    do {
      const page = await this.retrying('list', { prefix }, (signal) =>
        client.send(
          new sdk.ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: fullPrefix === '' ? undefined : fullPrefix,
            StartAfter: token === undefined ? startAfter : undefined,
            ContinuationToken: token,
          }),
          { abortSignal: signal },
        ),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined || !object.Key.startsWith(fullPrefix)) continue;
        const key = object.Key.slice(this.prefix.length);
        if (!isObjectKey(key)) continue; // not written through this store (e.g. 'a//b'): not ours to show
        yield { key, size: object.Size ?? 0, version: etagOf(object.ETag) };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  /** Releases the client's sockets if this store created the client (a passed-in client is left alone). */
  destroy(): void {
    if (this.clientInstance !== undefined && this.options.client === undefined) this.clientInstance.destroy();
    this.clientInstance = undefined;
  }

  /** A zero-length read: HEAD for the version. */
  private async emptyRead(key: string): Promise<StoredObject | undefined> {
    const { sdk, client } = await this.connect();
    return this.retrying('get', { key }, async (signal) => {
      try {
        const out = await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }), { abortSignal: signal });
        return { data: new Uint8Array(0), version: etagOf(out.ETag) };
      } catch (e) {
        if (classifyS3Error(e) === 'not-found') return undefined;
        throw e;
      }
    });
  }

  /** A retried conditional put met a failed precondition: did an earlier attempt of ours land? */
  private async settleRetriedPut(key: string, body: Uint8Array, createOnly: boolean, refused: unknown): Promise<{ version: ObjectVersion }> {
    const current = await this.get(key);
    if (current !== undefined && sameBytes(current.data, body)) return { version: current.version };
    // Create-only: ours landing would have made every other create fail, so other bytes mean ours never did.
    if (createOnly && current !== undefined) throw preconditionFailed(key, true, undefined, refused);
    throw new StoreUnavailableError(`put outcome unknown after a retry. key=${key}`, { op: 'put', key, outcome: 'unknown' }, refused);
  }

  /** Runs `attempt` under the request deadline, retrying transient failures with backoff and full jitter. */
  private async retrying<T>(op: string, subject: ErrorDetails, attempt: (signal: AbortSignal, n: number) => Promise<T>): Promise<T> {
    const { maxAttempts, baseDelayMs, maxDelayMs } = this.options.retry;
    for (let n = 1; ; n++) {
      try {
        return await this.withDeadline((signal) => attempt(signal, n));
      } catch (e) {
        if (n >= maxAttempts || classifyS3Error(e) !== 'transient') throw toS3StoreError(op, subject, e, n);
        await systemClock.sleep(Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (n - 1)));
      }
    }
  }

  /** Aborts the request (and stops waiting for it) after `requestTimeoutMs`. */
  private async withDeadline<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const timeoutMs = this.options.requestTimeoutMs;
    if (timeoutMs === 0) return run(controller.signal);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const timeout = new S3RequestTimeout(timeoutMs);
        controller.abort(timeout);
        reject(timeout);
      }, timeoutMs);
    });
    try {
      return await Promise.race([run(controller.signal), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function preconditionFailed(key: string, createOnly: boolean, expected: ObjectVersion | undefined, cause: unknown): PreconditionFailedError {
  const { status, code } = s3ErrorFacts(cause);
  const details = { key, s3Code: code, status };
  return createOnly
    ? new PreconditionFailedError(`object already exists. key=${key}`, details, cause)
    : new PreconditionFailedError(`object version does not match. key=${key} expected=${expected}`, details, cause);
}

/** ETags are compared as opaque strings, always in their quoted form (some servers drop the quotes). */
function etagOf(etag: string | undefined): ObjectVersion {
  if (etag === undefined || etag === '') {
    throw new InvalidConfigError('s3 response carries no ETag; in a browser the bucket CORS rules must expose the ETag header', { option: 'bucket' });
  }
  return etag.startsWith('"') ? etag : `"${etag}"`;
}

function isObjectKey(key: string): boolean {
  try {
    validateObjectKey(key);
    return true;
  } catch {
    return false;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
