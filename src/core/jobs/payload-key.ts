/**
 * The payload idempotency key (reference `payload_idempotency_key`): `{name}:{hex(SHA-256(bytes))}`
 * where the bytes are the input encoded by the job's codec, so two submissions of one job with the
 * same input collapse onto one job id and different inputs never do. Opt-in per job:
 * `defineJob({ ..., idempotencyKey: 'payload' })`.
 */
import { sha256Hex } from '../hash.js';
import { InvalidArgumentError } from '../errors.js';
import { show } from '../show.js';
import type { Job } from './job.js';

/**
 * `{job.name}:{64 hex digits}` for `input`, from the bytes of the job's codec. The value codec
 * encodes objects in key order, so `{ a, b }` and `{ b, a }` are two keys. The runner computes it
 * on the input as `parse.input` returns it. Asynchronous because it hashes with WebCrypto. Rejects with INVALID_ARGUMENT (reason `invalid_job` for
 * something that is not a job, `invalid_job_input` for an input the codec cannot encode).
 * @example
 * await payloadIdempotencyKey(resize, { url, width: 640 }); // 'img.resize:3f0a…'
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function payloadIdempotencyKey<I>(job: Job<I, any, any>, input: I): Promise<string> {
  if (typeof job !== 'object' || job === null || typeof job.name !== 'string' || typeof job.codec?.encode !== 'function') {
    throw new InvalidArgumentError(`payloadIdempotencyKey takes a job from defineJob. job=${show(job)}`, { reason: 'invalid_job' });
  }
  let bytes: Uint8Array;
  try {
    bytes = job.codec.encode(input);
  } catch (e) {
    throw new InvalidArgumentError(`job input cannot be encoded: ${e instanceof Error ? e.message : String(e)}. job=${job.name}`, { reason: 'invalid_job_input', job: job.name });
  }
  return `${job.name}:${await sha256Hex(bytes)}`;
}
