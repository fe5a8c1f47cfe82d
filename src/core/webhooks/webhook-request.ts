/**
 * The producer side of webhook delivery: a delivery is an ordinary queue job whose payload is the
 * request body and whose job headers say where and how to send it, so it rides on the queue's
 * retries, backoff, dead letters and inspection. Job headers:
 *
 * - `webhook.url`: absolute `http:` or `https:` URL (required);
 * - `webhook.method`: HTTP method (default `POST`);
 * - `webhook.timeout_ms`: per-attempt timeout in ms (default: the worker's);
 * - `http.<Name>`: one per outgoing HTTP header, passed through as is.
 */
import { InvalidArgumentError } from '../errors.js';
import type { EnqueueOptions, EnqueueRequest, Queue } from '../queue/index.js';
import { show } from '../show.js';

export const WEBHOOK_HEADER_URL = 'webhook.url';
export const WEBHOOK_HEADER_METHOD = 'webhook.method';
export const WEBHOOK_HEADER_TIMEOUT_MS = 'webhook.timeout_ms';
export const WEBHOOK_HTTP_HEADER_PREFIX = 'http.';

/** One webhook delivery to enqueue. */
export interface WebhookRequest {
  /** Absolute `http:`/`https:` URL. */
  readonly url: string;
  /** HTTP method, default `POST`. */
  readonly method?: string;
  /** Outgoing HTTP headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Per-attempt timeout in ms; default the worker's `defaultTimeoutMs`. */
  readonly timeoutMs?: number;
}

// An HTTP token (RFC 9110 §5.6.2): what method and header names may contain.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HTTP_URL = /^https?:\/\/[^\s/?#@]+(?:@[^\s/?#@]+)?(?:[/?#]\S*)?$/i;

/** Whether `url` is an absolute http(s) URL with a host and no whitespace. */
export function isWebhookUrl(url: unknown): url is string {
  return typeof url === 'string' && url.length <= 8192 && HTTP_URL.test(url);
}

/** Throws INVALID_ARGUMENT (reason `invalid_webhook_url`) unless `url` is an absolute http(s) URL. */
export function checkWebhookUrl(url: unknown, what = 'webhook url'): asserts url is string {
  if (!isWebhookUrl(url)) throw new InvalidArgumentError(`${what} must be an absolute http(s) URL. url=${show(url)}`, { reason: 'invalid_webhook_url', value: show(url) });
}

export function isHttpToken(text: unknown): text is string {
  return typeof text === 'string' && TOKEN.test(text);
}

/**
 * Builds (without performing) the enqueue of one delivery on `targetQueue`, e.g. to stage it as a
 * settlement or terminal effect. `options` are passed through (their `headers` merged under the
 * delivery's). Throws INVALID_ARGUMENT (reason `invalid_webhook_url`, `invalid_webhook_request`).
 */
export function webhookEnqueueRequest(targetQueue: string, request: WebhookRequest, body: Uint8Array, options: EnqueueOptions = {}): EnqueueRequest {
  if (typeof request !== 'object' || request === null) throw invalidRequest(`webhook request must be an object. request=${show(request)}`);
  checkWebhookUrl(request.url);
  const headers: Record<string, string> = { ...options.headers, [WEBHOOK_HEADER_URL]: request.url };
  if (request.method !== undefined) {
    if (!isHttpToken(request.method)) throw invalidRequest(`webhook method must be an HTTP token. method=${show(request.method)}`);
    headers[WEBHOOK_HEADER_METHOD] = request.method.toUpperCase();
  }
  if (request.timeoutMs !== undefined) {
    if (!Number.isSafeInteger(request.timeoutMs) || request.timeoutMs <= 0) throw invalidRequest(`webhook timeoutMs must be a positive integer. timeoutMs=${show(request.timeoutMs)}`);
    headers[WEBHOOK_HEADER_TIMEOUT_MS] = String(request.timeoutMs);
  }
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    if (!isHttpToken(name) || typeof value !== 'string' || /[\r\n\0]/.test(value)) throw invalidRequest(`invalid webhook http header. name=${show(name)} value=${show(value)}`);
    headers[WEBHOOK_HTTP_HEADER_PREFIX + name] = value;
  }
  return { queue: targetQueue, payload: body, options: { ...options, headers } };
}

/** Enqueues one delivery on `targetQueue`; resolves with the job id (the delivery id). Rejects as `Queue.enqueue` and `webhookEnqueueRequest`. */
export async function enqueueWebhook(queue: Queue, targetQueue: string, request: WebhookRequest, body: Uint8Array, options?: EnqueueOptions): Promise<string> {
  const r = webhookEnqueueRequest(targetQueue, request, body, options);
  return queue.enqueue(r.queue, r.payload, r.options);
}

function invalidRequest(message: string): InvalidArgumentError {
  return new InvalidArgumentError(message, { reason: 'invalid_webhook_request' });
}
