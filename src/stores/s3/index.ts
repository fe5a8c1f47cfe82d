/**
 * The S3 store (subpath `taquba-workflow/stores/s3`): an ObjectStore on AWS S3, Cloudflare R2,
 * MinIO or any S3-compatible service with conditional writes, through `@aws-sdk/client-s3`.
 * Platform-neutral (Node and browsers). See `docs/s3.md` for provider setup and costs.
 *
 * Errors: PRECONDITION_FAILED (412 / 409 ConditionalRequestConflict / 404 on If-Match),
 * STORE_UNAVAILABLE (after bounded retries of throttling, 5xx, network errors and timeouts),
 * STORE_PERMISSION (403 and credential refusals), INVALID_CONFIG (bad options, bucket, region,
 * endpoint), UNSUPPORTED_PLATFORM (the server lacks conditional writes), INVALID_ARGUMENT (bad
 * keys). The SDK error is kept as `cause`, S3's code in `details.s3Code`.
 */
export { S3ObjectStore } from './s3-store.js';
export { DEFAULT_S3_REQUEST_TIMEOUT_MS, DEFAULT_S3_RETRY } from './s3-options.js';
export type { S3ObjectStoreOptions, S3RetryOptions } from './s3-options.js';
