/**
 * `WebhookWorker`: the queue worker that performs webhook deliveries (jobs built by
 * `webhookEnqueueRequest`). Run it with `runWorker` / `runWorkerConcurrent` on the delivery queue.
 *
 * One attempt:
 * 1. Read the job headers; a missing or bad URL, method or timeout dead-letters the job at once
 *    (`PermanentFailure`, the reason names the header).
 * 2. Extend the lease to cover the timeout, then send the payload as the body with the `http.*`
 *    headers, the delivery id header (the job id: the same on every retry, for receiver dedup)
 *    and, with a secret, the Standard Webhooks signature headers (re-signed per attempt: the
 *    timestamp is the attempt's).
 * 3. Classify: 2xx ⇒ done (ack). 408, 429, 5xx, network errors and timeouts ⇒ transient: nack
 *    with the queue's backoff, or later when the response has a `Retry-After` (seconds or an HTTP
 *    date, capped at `maxRetryAfterMs`); out of attempts ⇒ dead letter. Any other status
 *    (4xx, 3xx not followed) ⇒ permanent: dead letter now. Failure reasons carry the status and
 *    the first 200 characters of the response body.
 *
 * HTTP goes through the platform `fetch` (browsers, workers, Node ≥ 18, Deno, Bun) unless one is
 * injected; nothing here depends on Node.
 */
import { systemClock, type Clock } from '../clock.js';
import { InvalidConfigError } from '../errors.js';
import { checkOptions, optionNames } from '../options.js';
import { PermanentFailure, RetryLater, type JobRecord, type LeaseHandle, type QueueWorker } from '../queue/index.js';
import { show } from '../show.js';
import { HEADER_WEBHOOK_ID, HEADER_WEBHOOK_SIGNATURE, HEADER_WEBHOOK_TIMESTAMP, signWebhook, webhookSecretKey, type WebhookSecret } from './signing.js';
import { isHttpToken, isWebhookUrl, WEBHOOK_HEADER_METHOD, WEBHOOK_HEADER_TIMEOUT_MS, WEBHOOK_HEADER_URL, WEBHOOK_HTTP_HEADER_PREFIX } from './webhook-request.js';
import { HEADER_TRACEPARENT, parseTraceparent, traceparentOf } from '../trace-context.js';
import { checkTracer, type OpenTelemetryTracer, type TraceSpan } from '../tracing.js';
import { requestAttributes, responseAttributes, tracedDelivery } from './webhook-tracing.js';

/** What the worker passes to `fetch` (a subset of `RequestInit`). */
export interface WebhookFetchInit {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: Uint8Array;
  readonly signal: AbortSignal;
}

/** What the worker reads from a response (a subset of the Fetch `Response`). */
export interface WebhookResponse {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** A `fetch` the worker can use: the platform's, or one injected for tests and other runtimes. */
export type WebhookFetch = (url: string, init: WebhookFetchInit) => Promise<WebhookResponse>;

export interface WebhookWorkerOptions {
  /** The HTTP client. Default the global `fetch`. */
  readonly fetch?: WebhookFetch;
  /** Per-attempt timeout when the job has no `webhook.timeout_ms`. Default 30 s. */
  readonly defaultTimeoutMs?: number;
  /** Header carrying the delivery id (the job id); null sends none. Default `webhook-id`. */
  readonly deliveryIdHeader?: string | null;
  /** Sign every delivery with this secret (Standard Webhooks); see `verifyWebhook`. */
  readonly secret?: WebhookSecret;
  /** Time for signature timestamps, `Retry-After` dates and timeouts. Default the system clock. */
  readonly clock?: Clock;
  /** Cap on a `Retry-After` wait. Default 1 hour. */
  readonly maxRetryAfterMs?: number;
  /**
   * An OpenTelemetry tracer (`trace.getTracer('my-app')`): each attempt is a `webhook.deliver`
   * span (a child of the run's trace when the job carries its `taquba-traceparent`) and sends its
   * `traceparent`. Without one, a job's `taquba-traceparent` is sent on as `traceparent` as is.
   */
  readonly tracer?: OpenTelemetryTracer;
}

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RETRY_AFTER_MS = 60 * 60 * 1000;
const BODY_PREVIEW_CHARS = 200;

/** Distinguishes our timeout from other aborts. */
class WebhookTimeout extends Error {
  constructor(ms: number) {
    super(`webhook delivery timed out. timeout_ms=${ms}`);
    this.name = 'WebhookTimeout';
  }
}

/** Every WebhookWorkerOptions name; adding an option, add its name here (the compiler insists). */
const WORKER_OPTION_NAMES = optionNames<WebhookWorkerOptions>({ fetch: true, defaultTimeoutMs: true, deliveryIdHeader: true, secret: true, clock: true, maxRetryAfterMs: true, tracer: true });

export class WebhookWorker implements QueueWorker {
  private readonly fetchFn: WebhookFetch | undefined;
  private readonly defaultTimeoutMs: number;
  private readonly deliveryIdHeader: string | null;
  private readonly secret: WebhookSecret | undefined;
  private readonly clock: Clock;
  private readonly maxRetryAfterMs: number;
  private readonly tracer: OpenTelemetryTracer | undefined;

  /** Throws INVALID_CONFIG for a bad option (a non-positive timeout, a bad header name or secret). */
  constructor(options: WebhookWorkerOptions = {}) {
    checkOptions(options, WORKER_OPTION_NAMES, 'WebhookWorker');
    this.fetchFn = options.fetch;
    if (this.fetchFn !== undefined && typeof this.fetchFn !== 'function') throw new InvalidConfigError('fetch must be a function', { option: 'fetch' });
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    if (!Number.isSafeInteger(this.defaultTimeoutMs) || this.defaultTimeoutMs <= 0) {
      throw new InvalidConfigError(`defaultTimeoutMs must be a positive integer. defaultTimeoutMs=${show(options.defaultTimeoutMs)}`, { option: 'defaultTimeoutMs' });
    }
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    if (!Number.isSafeInteger(this.maxRetryAfterMs) || this.maxRetryAfterMs < 0) {
      throw new InvalidConfigError(`maxRetryAfterMs must be a non-negative integer. maxRetryAfterMs=${show(options.maxRetryAfterMs)}`, { option: 'maxRetryAfterMs' });
    }
    this.deliveryIdHeader = options.deliveryIdHeader === undefined ? HEADER_WEBHOOK_ID : options.deliveryIdHeader;
    if (this.deliveryIdHeader !== null && !isHttpToken(this.deliveryIdHeader)) {
      throw new InvalidConfigError(`deliveryIdHeader must be an HTTP header name or null. deliveryIdHeader=${show(this.deliveryIdHeader)}`, { option: 'deliveryIdHeader' });
    }
    if (options.secret !== undefined) {
      try {
        webhookSecretKey(options.secret);
      } catch (e) {
        throw new InvalidConfigError((e as Error).message, { option: 'secret' });
      }
    }
    this.secret = options.secret;
    this.clock = options.clock ?? systemClock;
    this.tracer = checkTracer('tracer', options.tracer);
  }

  /** One delivery attempt (see the module comment for the outcome rules). */
  process(job: JobRecord, lease: LeaseHandle): Promise<void> {
    const tracer = this.tracer;
    if (tracer === undefined) {
      // Passed on as it is: the receiver continues the run's trace (a malformed value is dropped).
      const given = job.headers[HEADER_TRACEPARENT];
      return this.deliver(job, lease, parseTraceparent(given) === undefined ? undefined : given, undefined);
    }
    return tracedDelivery(tracer, job, (span) => this.deliver(job, lease, traceparentOf(span), span));
  }

  /** One attempt, sending `traceparent` (unless the request has its own) and describing it on `span`. */
  private async deliver(job: JobRecord, lease: LeaseHandle, traceparent: string | undefined, span: TraceSpan | undefined): Promise<void> {
    const { url, method, timeoutMs } = this.target(job);
    if (span !== undefined) requestAttributes(span, job, url, method);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(job.headers)) {
      if (name.startsWith(WEBHOOK_HTTP_HEADER_PREFIX)) headers[name.slice(WEBHOOK_HTTP_HEADER_PREFIX.length)] = value;
    }
    if (traceparent !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'traceparent')) headers.traceparent = traceparent;
    if (this.deliveryIdHeader !== null) headers[this.deliveryIdHeader] = job.id;
    if (this.secret !== undefined) {
      const timestamp = Math.floor(this.clock.now() / 1000);
      headers[HEADER_WEBHOOK_ID] = job.id;
      headers[HEADER_WEBHOOK_TIMESTAMP] = String(timestamp);
      headers[HEADER_WEBHOOK_SIGNATURE] = await signWebhook(this.secret, job.id, timestamp, job.payload);
    }
    lease.ensureAtLeast(timeoutMs);
    const fetchFn = this.fetchFn ?? platformFetch();
    const body = method === 'GET' || method === 'HEAD' ? undefined : job.payload;

    const controller = new AbortController();
    const timerStop = new AbortController();
    const onCancel = (): void => controller.abort(lease.signal.reason);
    lease.signal.addEventListener('abort', onCancel, { once: true });
    this.clock.sleep(timeoutMs, timerStop.signal).then(
      () => controller.abort(new WebhookTimeout(timeoutMs)),
      () => {},
    );
    let status: number;
    let retryAfter: string | null;
    let preview: string;
    try {
      const init: WebhookFetchInit = body === undefined ? { method, headers, signal: controller.signal } : { method, headers, body, signal: controller.signal };
      const response = await fetchFn(url, init);
      status = response.status;
      retryAfter = response.headers.get('retry-after');
      // The body is read (within the timeout) so the connection is released; kept for the reason.
      preview = await response.text().then(
        (text) => text.slice(0, BODY_PREVIEW_CHARS),
        () => '',
      );
    } catch (e) {
      const reason = controller.signal.reason instanceof WebhookTimeout ? controller.signal.reason.message : `webhook delivery failed: ${describe(e)}`;
      throw new Error(reason, { cause: e });
    } finally {
      timerStop.abort();
      lease.signal.removeEventListener('abort', onCancel);
    }
    if (span !== undefined) responseAttributes(span, status);
    if (status >= 200 && status < 300) return;
    const reason = `webhook delivery failed: HTTP ${status}${preview ? `. body=${JSON.stringify(preview)}` : ''}`;
    if (status === 408 || status === 429 || status >= 500) {
      const waitMs = this.retryAfterMs(retryAfter);
      if (waitMs !== undefined) throw new RetryLater(`${reason} retry_after_ms=${waitMs}`, waitMs);
      throw new Error(reason);
    }
    throw new PermanentFailure(reason);
  }

  private target(job: JobRecord): { url: string; method: string; timeoutMs: number } {
    const url = job.headers[WEBHOOK_HEADER_URL];
    if (!isWebhookUrl(url)) throw new PermanentFailure(`invalid webhook job: header ${WEBHOOK_HEADER_URL} must be an absolute http(s) URL. url=${show(url)}`);
    const method = (job.headers[WEBHOOK_HEADER_METHOD] ?? 'POST').toUpperCase();
    if (!isHttpToken(method)) throw new PermanentFailure(`invalid webhook job: header ${WEBHOOK_HEADER_METHOD} is not an HTTP method. method=${show(method)}`);
    const timeoutText = job.headers[WEBHOOK_HEADER_TIMEOUT_MS];
    let timeoutMs = this.defaultTimeoutMs;
    if (timeoutText !== undefined) {
      timeoutMs = /^\d{1,12}$/.test(timeoutText) ? Number(timeoutText) : 0;
      if (timeoutMs <= 0) throw new PermanentFailure(`invalid webhook job: header ${WEBHOOK_HEADER_TIMEOUT_MS} must be a positive integer. timeout_ms=${show(timeoutText)}`);
    }
    return { url, method, timeoutMs };
  }

  /** `Retry-After` as a wait in ms (delta seconds or an HTTP date), capped; undefined when absent or unparseable. */
  private retryAfterMs(value: string | null): number | undefined {
    if (value === null) return undefined;
    const text = value.trim();
    let ms: number;
    if (/^\d+$/.test(text)) ms = Number(text) * 1000;
    else {
      const at = Date.parse(text);
      if (Number.isNaN(at)) return undefined;
      ms = Math.max(0, at - this.clock.now());
    }
    return Math.min(ms, this.maxRetryAfterMs);
  }
}

function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause instanceof Error ? `: ${e.cause.message}` : '';
  return `${e.message || e.name}${cause}`;
}

function platformFetch(): WebhookFetch {
  const f = (globalThis as { fetch?: WebhookFetch }).fetch;
  if (typeof f !== 'function') throw new PermanentFailure('no fetch on this platform: pass WebhookWorkerOptions.fetch');
  return (url, init) => f.call(globalThis, url, init);
}

