/**
 * Webhooks: delivery of HTTP callbacks through the queue, and the terminal hook that notifies a
 * run's `callback_url` when it ends. `webhookEnqueueRequest` / `enqueueWebhook` build deliveries,
 * `WebhookWorker` performs them (retries, `Retry-After`, dead letters), `WebhookTerminalHook`
 * stages one per terminated run, `signWebhook` / `verifyWebhook` implement Standard Webhooks
 * signatures. Never imports a platform API: HTTP is the injected or platform `fetch`, HMAC is
 * WebCrypto.
 */
export {
  webhookEnqueueRequest,
  enqueueWebhook,
  isWebhookUrl,
  WEBHOOK_HEADER_URL,
  WEBHOOK_HEADER_METHOD,
  WEBHOOK_HEADER_TIMEOUT_MS,
  WEBHOOK_HTTP_HEADER_PREFIX,
  type WebhookRequest,
} from './webhook-request.js';
export {
  WebhookWorker,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  type WebhookWorkerOptions,
  type WebhookFetch,
  type WebhookFetchInit,
  type WebhookResponse,
} from './webhook-worker.js';
export {
  WebhookTerminalHook,
  runTerminatedWebhook,
  DEFAULT_CALLBACK_URL_HEADER,
  type WebhookTerminalHookOptions,
  type RunTerminatedWebhook,
} from './webhook-terminal-hook.js';
export {
  signWebhook,
  verifyWebhook,
  HEADER_WEBHOOK_ID,
  HEADER_WEBHOOK_TIMESTAMP,
  HEADER_WEBHOOK_SIGNATURE,
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  type WebhookSecret,
  type WebhookHeaders,
  type VerifyWebhookOptions,
  type VerifiedWebhook,
} from './signing.js';
