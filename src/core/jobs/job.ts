/**
 * `defineJob`: a typed async function that runs as a single-step workflow run. The definition
 * carries a stable name (the routing key stored with every submission), the function, and how its
 * input, output and error payload become bytes (`codec`, default the memo's value codec) and are
 * checked after decoding (`parse`, so a schema library such as zod plugs in without being a
 * dependency: `parse: { input: (v) => schema.parse(v) }`).
 */
import { decodeValue, encodeValue } from '../codec.js';
import { InvalidArgumentError } from '../errors.js';
import type { LeaseHandle } from '../queue/index.js';
import { checkOptions, optionNames } from '../options.js';
import { show } from '../show.js';
import type { EffectsHandle } from '../workflow/steps/effects-handle.js';
import type { Memo } from '../workflow/steps/memo.js';
import type { KvReadHandle } from '../workflow/steps/step.js';
import type { StateKey } from './job-state.js';
import { payloadIdempotencyKey } from './payload-key.js';

/** What an idempotency key function returns (null or undefined: every submission runs). */
export type IdempotencyKey = string | null | undefined;

/** Bytes for a job's input, output and error payload. */
export interface JobCodec {
  encode(value: unknown): Uint8Array;
  decode(bytes: Uint8Array): unknown;
}

/**
 * Checks of decoded values: each gets the decoded `unknown` and returns the typed value or
 * throws. `input` also runs at `submit` (a throw rejects the submission with INVALID_ARGUMENT,
 * reason `invalid_job_input`); `output` before the output is stored and again when it is read;
 * `error` when a failure payload is read back.
 */
export interface JobParse<I, O, E> {
  readonly input?: (value: unknown) => I;
  readonly output?: (value: unknown) => O;
  readonly error?: (value: unknown) => E;
}

/** What a job's `run` gets besides its input. */
export interface JobContext<E> {
  /** The job id (= the run id). */
  readonly id: string;
  readonly name: string;
  /** 1, plus one per earlier failed try (see `Step.attempt`). */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** Fires when the job is cancelled while it runs (`runner.cancel(id)`). */
  readonly signal: AbortSignal;
  /** Extends the queue lease for long jobs (`ensureAtLeast(ms)`). */
  readonly lease: LeaseHandle;
  /** Durable memo of this job: a retried attempt reads back what an earlier one stored. */
  readonly memo: Memo;
  /** Committed reads of the caller KV namespace. */
  readonly kv: KvReadHandle;
  /** Caller-KV writes applied only with the job's success. */
  readonly effects: EffectsHandle;
  /** The submitter's headers. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The runner's state value under `key` (`runner.provide(key, value)` or the runner's `state`
   * option). Throws INVALID_CONFIG (reason `missing_state`) when the runner has none: permanent,
   * so the job fails without retrying.
   */
  state<T>(key: StateKey<T>): T;
  /** The runner's state value under `key`, or undefined when it has none. */
  tryState<T>(key: StateKey<T>): T | undefined;
  /**
   * Fails the job with its own typed error: no retry; the awaiting caller gets a `JobFailedError`
   * (code JOB_FAILED, reason `job_error`) whose `error` is this payload. Never returns.
   */
  fail(error: E): never;
}

/** The arguments of `defineJob`. */
export interface JobDefinition<I, O, E> {
  /** Stable and unique per runner: stored with every submission and used to route it. 1..200 characters. */
  readonly name: string;
  /**
   * The work. Resolve with the output; `ctx.fail(error)` for the job's own typed failure; any
   * other throw is retried with the queue's backoff (a `StepError.permanent` or a permanent
   * library error is not) and, out of attempts, fails the job with reason `error`.
   */
  readonly run: (input: I, ctx: JobContext<E>) => Promise<O> | O;
  /**
   * A key that collapses duplicate submissions (null or absent: every submission runs). Jobs of
   * one runner with the same name and key share one id, so a resubmission while the job runs or
   * after it finished gets the same handle (until retention sweeps the result). `'payload'`: the
   * key is `payloadIdempotencyKey(job, input)`, so equal inputs are one job.
   */
  readonly idempotencyKey?: ((input: I) => IdempotencyKey | Promise<IdempotencyKey>) | 'payload';
  /** Attempts per job; default the runner's, else the queue's. */
  readonly maxAttempts?: number;
  /** Default: the value codec (JSON-like data plus Date, Map, Set, BigInt, typed arrays, undefined). */
  readonly codec?: JobCodec;
  readonly parse?: JobParse<I, O, E>;
}

/** A defined job; pass it to `JobRunner.register` and `submit`. */
export interface Job<I, O, E = never> {
  readonly name: string;
  readonly run: (input: I, ctx: JobContext<E>) => Promise<O> | O;
  readonly idempotencyKey: ((input: I) => IdempotencyKey | Promise<IdempotencyKey>) | undefined;
  readonly maxAttempts: number | undefined;
  readonly codec: JobCodec;
  readonly parse: JobParse<I, O, E>;
}

/**
 * Any job, whatever its types: a list of different jobs (a cluster's `jobs` option, the runner's
 * registry). `any` because a job is invariant in its input (taken by `run`, produced by `parse.input`).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyJob = Job<any, any, any>;

/** The value codec (what `memo.memoized` stores). */
export const valueJobCodec: JobCodec = { encode: encodeValue, decode: decodeValue };

const DEFINITION_FIELDS = optionNames<JobDefinition<unknown, unknown, unknown>>({ name: true, run: true, idempotencyKey: true, maxAttempts: true, codec: true, parse: true });
const PARSE_FIELDS = optionNames<JobParse<unknown, unknown, unknown>>({ input: true, output: true, error: true });

/** Longest job name. */
export const MAX_JOB_NAME_LEN = 200;

/**
 * Defines a job. Input and output types are inferred from `run`; give `E` (the payload of
 * `ctx.fail`) through `parse.error` or explicit type arguments. Throws INVALID_ARGUMENT (reason
 * `invalid_job`) for a bad definition.
 * @example
 * const fetchPage = defineJob({
 *   name: 'example.fetch_page',
 *   idempotencyKey: (input: { url: string }) => `fetch:${input.url}`,
 *   run: async ({ url }, ctx) => (await fetch(url, { signal: ctx.signal })).text(),
 * });
 */
export function defineJob<I, O, E = never>(definition: JobDefinition<I, O, E>): Job<I, O, E> {
  const bad = (message: string, field: string): InvalidArgumentError => new InvalidArgumentError(`invalid job definition: ${message}`, { reason: 'invalid_job', field });
  if (typeof definition !== 'object' || definition === null) throw bad(`definition must be an object. definition=${show(definition)}`, 'definition');
  checkOptions(definition, DEFINITION_FIELDS, 'job definition', 'INVALID_ARGUMENT', { reason: 'invalid_job' });
  const { name, run, idempotencyKey, maxAttempts, codec, parse } = definition;
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_JOB_NAME_LEN) throw bad(`name must be 1..${MAX_JOB_NAME_LEN} characters. name=${show(name)}`, 'name');
  if (typeof run !== 'function') throw bad(`run must be a function. name=${name}`, 'run');
  if (idempotencyKey !== undefined && idempotencyKey !== 'payload' && typeof idempotencyKey !== 'function') throw bad(`idempotencyKey must be a function or 'payload'. name=${name}`, 'idempotencyKey');
  if (maxAttempts !== undefined && (!Number.isInteger(maxAttempts) || maxAttempts < 1)) throw bad(`maxAttempts must be a positive integer. maxAttempts=${show(maxAttempts)}`, 'maxAttempts');
  if (codec !== undefined && (typeof codec?.encode !== 'function' || typeof codec?.decode !== 'function')) throw bad(`codec must have encode and decode. name=${name}`, 'codec');
  if (parse !== undefined) {
    if (typeof parse !== 'object' || parse === null) throw bad(`parse must be an object. name=${name}`, 'parse');
    checkOptions(parse, PARSE_FIELDS, 'job parse', 'INVALID_ARGUMENT', { reason: 'invalid_job' });
    for (const k of ['input', 'output', 'error'] as const) {
      if (parse[k] !== undefined && typeof parse[k] !== 'function') throw bad(`parse.${k} must be a function. name=${name}`, `parse.${k}`);
    }
  }
  // The payload key needs the finished job (its name and codec); it is called only after this returns.
  const keyOf = idempotencyKey === 'payload' ? (input: I): Promise<string> => payloadIdempotencyKey(job, input) : idempotencyKey;
  const job: Job<I, O, E> = Object.freeze({ name, run, idempotencyKey: keyOf, maxAttempts, codec: codec ?? valueJobCodec, parse: Object.freeze({ ...(parse ?? {}) }) });
  return job;
}
