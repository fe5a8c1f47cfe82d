/**
 * Webhook signatures, the Standard Webhooks way (https://www.standardwebhooks.com): the sender
 * signs `${id}.${timestamp}.${body}` with HMAC-SHA256 and sends three headers:
 *
 * - `webhook-id`: the delivery id, the same on every retry (the receiver's dedup key);
 * - `webhook-timestamp`: the attempt's time in integer seconds since the epoch;
 * - `webhook-signature`: `v1,<base64 signature>` (space-separated when several keys sign).
 *
 * Secrets follow the convention: `whsec_<base64 key bytes>` (a string without the prefix is taken
 * as base64 too), or the raw key bytes. HMAC runs through WebCrypto (`crypto.subtle`), so this
 * works unchanged in browsers, workers, Node, Deno and Bun.
 */
import { utf8 } from '../bytes.js';
import { systemClock, type Clock } from '../clock.js';
import { InvalidArgumentError } from '../errors.js';
import { fromBase64, toBase64 } from './base64.js';

/** A signing secret: `whsec_<base64>`, bare base64, or the key bytes. */
export type WebhookSecret = string | Uint8Array;

export const HEADER_WEBHOOK_ID = 'webhook-id';
export const HEADER_WEBHOOK_TIMESTAMP = 'webhook-timestamp';
export const HEADER_WEBHOOK_SIGNATURE = 'webhook-signature';

/** Default tolerance of `verifyWebhook` between the signed timestamp and now: 5 minutes. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

const SECRET_PREFIX = 'whsec_';

/** The key bytes of a secret. Throws INVALID_ARGUMENT (reason `invalid_webhook_secret`). */
export function webhookSecretKey(secret: WebhookSecret): Uint8Array {
  if (secret instanceof Uint8Array) {
    if (secret.length === 0) throw invalidSecret('empty key');
    return secret;
  }
  if (typeof secret !== 'string') throw invalidSecret('expected a string or Uint8Array');
  const text = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  let key: Uint8Array;
  try {
    key = fromBase64(text);
  } catch {
    throw invalidSecret('not base64');
  }
  if (key.length === 0) throw invalidSecret('empty key');
  return key;
}

function invalidSecret(why: string): InvalidArgumentError {
  return new InvalidArgumentError(`invalid webhook secret: ${why}`, { reason: 'invalid_webhook_secret' });
}

function bodyBytes(body: Uint8Array | string): Uint8Array {
  return typeof body === 'string' ? utf8(body) : body;
}

async function hmac(key: Uint8Array, id: string, timestamp: string, body: Uint8Array): Promise<string> {
  const prefix = utf8(`${id}.${timestamp}.`);
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix);
  content.set(body, prefix.length);
  const cryptoKey = await crypto.subtle.importKey('raw', new Uint8Array(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return toBase64(new Uint8Array(await crypto.subtle.sign('HMAC', cryptoKey, content)));
}

/**
 * The signature header value (`v1,<base64>`) for one delivery attempt. `timestamp` is integer
 * seconds since the epoch. Rejects with INVALID_ARGUMENT for a bad secret.
 */
export async function signWebhook(secret: WebhookSecret, id: string, timestamp: number, body: Uint8Array | string): Promise<string> {
  return `v1,${await hmac(webhookSecretKey(secret), id, String(timestamp), bodyBytes(body))}`;
}

/** Request headers as a receiver has them: Fetch `Headers`, or a plain (Node) header object. */
export type WebhookHeaders = { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyWebhookOptions {
  /** Largest allowed distance between the signed timestamp and now, in seconds. Default 300. */
  readonly toleranceSeconds?: number;
  /** Where "now" comes from. Default the system clock. */
  readonly clock?: Clock;
}

/** What a verified delivery carried. */
export interface VerifiedWebhook {
  readonly id: string;
  /** The signed timestamp, seconds since the epoch. */
  readonly timestamp: number;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  let value = record[name];
  if (value === undefined) {
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  return typeof value === 'string' ? value : value?.[0];
}

/** Compares without an early exit, so timing does not reveal how much of a signature matched. */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Verifies a delivery for a receiver: the `webhook-id`, `webhook-timestamp` and
 * `webhook-signature` headers against the raw body (the exact bytes received; a re-serialised
 * JSON body will not match). Resolves with the delivery id and timestamp; dedup on the id.
 *
 * Rejects with INVALID_ARGUMENT, `details.reason`: `missing_webhook_headers`,
 * `webhook_timestamp_out_of_tolerance` (too old or too far in the future: replay protection),
 * `webhook_signature_mismatch` (wrong secret or tampered body), `invalid_webhook_secret`.
 *
 * @example
 * ```ts
 * const { id } = await verifyWebhook(process.env.WEBHOOK_SECRET!, req.headers, rawBody);
 * ```
 */
export async function verifyWebhook(secret: WebhookSecret, headers: WebhookHeaders, body: Uint8Array | string, options: VerifyWebhookOptions = {}): Promise<VerifiedWebhook> {
  const key = webhookSecretKey(secret);
  const id = header(headers, HEADER_WEBHOOK_ID);
  const timestampText = header(headers, HEADER_WEBHOOK_TIMESTAMP);
  const signatures = header(headers, HEADER_WEBHOOK_SIGNATURE);
  if (!id || !timestampText || !signatures) {
    throw new InvalidArgumentError('webhook headers missing: need webhook-id, webhook-timestamp and webhook-signature', { reason: 'missing_webhook_headers' });
  }
  const timestamp = /^\d{1,15}$/.test(timestampText) ? Number(timestampText) : NaN;
  const tolerance = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.clock ?? systemClock).now() / 1000);
  if (!Number.isFinite(timestamp) || Math.abs(nowSeconds - timestamp) > tolerance) {
    throw new InvalidArgumentError(`webhook timestamp out of tolerance. timestamp=${timestampText} now=${nowSeconds}`, { reason: 'webhook_timestamp_out_of_tolerance' });
  }
  const expected = await hmac(key, id, timestampText, bodyBytes(body));
  for (const candidate of signatures.split(' ')) {
    const [version, signature] = candidate.split(',', 2);
    if (version === 'v1' && signature !== undefined && constantTimeEqual(signature, expected)) return { id, timestamp };
  }
  throw new InvalidArgumentError(`webhook signature mismatch. id=${id}`, { reason: 'webhook_signature_mismatch' });
}
