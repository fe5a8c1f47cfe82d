/**
 * `WebhookTerminalHook`: tells an HTTP endpoint how a run ended. A run opts in by carrying the
 * callback URL in its `callback_url` header (the name is configurable, deliberately outside the
 * reserved `workflow.` prefix); runs without it get no notification job at all.
 *
 * The hook does not call the endpoint itself: it stages the enqueue of a delivery job on the
 * target queue as a terminal effect, so the delivery is created exactly once, in the transaction
 * that acknowledges the notification (a retried notification stages it again, but only one
 * acknowledgement commits). A `WebhookWorker` on the target queue then performs it, with retries.
 *
 * A callback URL that is not an absolute http(s) URL is a permanent hook error: the notification
 * job dead-letters with the reason `invalid callback_url header: ...` (visible in the dead jobs)
 * and no delivery is created. The run's own outcome is unaffected.
 *
 * Body (JSON, UTF-8, `Content-Type: application/json`):
 *
 * ```json
 * {
 *   "type": "workflow.run.succeeded",      // or workflow.run.failed / workflow.run.cancelled
 *   "timestamp": "2026-01-01T12:00:00.000Z", // when the delivery was staged (ISO 8601)
 *   "data": {
 *     "run_id": "01J...",
 *     "status": "succeeded",                // succeeded | failed | cancelled
 *     "final_step": 2,                      // the step that produced the outcome
 *     "output": "hello",                    // succeeded: the result as UTF-8 text (null if not valid UTF-8)
 *     "output_base64": "aGVsbG8=",          // succeeded: the result bytes, base64; else null
 *     "error": null                         // failed: the reason; cancelled: the runner's reason,
 *   }                                       //   null for an external cancel; succeeded: null
 * }
 * ```
 *
 * HTTP headers: `Content-Type`, `Workflow-Run-Id`, `Workflow-Run-Status`, the configured extra
 * headers, and from the worker the delivery id (`webhook-id`) and, with a secret, the signature.
 */
import { utf8 } from '../bytes.js';
import { systemClock, type Clock } from '../clock.js';
import { InvalidConfigError, isTaqubaError } from '../errors.js';
import { checkOptions, optionNames } from '../options.js';
import { validateQueueName } from '../queue/records/validation.js';
import type { TerminalEffects } from '../workflow/steps/effects-handle.js';
import { StepError } from '../workflow/steps/step-error.js';
import type { RunOutcome, TerminalHook, TerminalStatus } from '../workflow/runs/terminal-hook.js';
import { toBase64 } from './base64.js';
import { webhookEnqueueRequest } from './webhook-request.js';
import { HEADER_TRACEPARENT } from '../trace-context.js';

export const DEFAULT_CALLBACK_URL_HEADER = 'callback_url';

export interface WebhookTerminalHookOptions {
  /** The queue a `WebhookWorker` serves. */
  readonly targetQueue: string;
  /** The run header holding the callback URL. Default `callback_url`. */
  readonly urlHeader?: string;
  /** Per-attempt timeout of the delivery in ms; default the worker's. */
  readonly timeoutMs?: number;
  /** Extra HTTP headers on every delivery. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Attempts of each delivery job; default the target queue's `maxAttempts`. */
  readonly maxAttempts?: number;
  /** Time for the payload's `timestamp`. Default the system clock. */
  readonly clock?: Clock;
}

/** The JSON body of a termination webhook (see the module comment). */
export interface RunTerminatedWebhook {
  readonly type: `workflow.run.${TerminalStatus}`;
  readonly timestamp: string;
  readonly data: {
    readonly run_id: string;
    readonly status: TerminalStatus;
    readonly final_step: number;
    readonly output: string | null;
    readonly output_base64: string | null;
    readonly error: string | null;
  };
}

function utf8OrNull(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** The webhook body for an outcome, at `nowMs`. */
export function runTerminatedWebhook(outcome: RunOutcome, nowMs: number): RunTerminatedWebhook {
  const result = outcome.status === 'succeeded' ? outcome.result : null;
  return {
    type: `workflow.run.${outcome.status}`,
    timestamp: new Date(nowMs).toISOString(),
    data: {
      run_id: outcome.runId,
      status: outcome.status,
      final_step: outcome.finalStep,
      output: result === null ? null : utf8OrNull(result),
      output_base64: result === null ? null : toBase64(result),
      error: outcome.error,
    },
  };
}

/**
 * @example
 * ```ts
 * const hook = new WebhookTerminalHook({ targetQueue: 'webhooks' });
 * const runtime = new WorkflowRuntime(queue, store, runner, hook);
 * await runtime.submit({ input, headers: { callback_url: 'https://example.com/hooks/runs' } });
 * void runWorker(queue, 'webhooks', new WebhookWorker({ secret: 'whsec_...' }), { signal });
 * ```
 */
/** Every WebhookTerminalHookOptions name; adding an option, add its name here (the compiler insists). */
const HOOK_OPTION_NAMES = optionNames<WebhookTerminalHookOptions>({ targetQueue: true, urlHeader: true, timeoutMs: true, headers: true, maxAttempts: true, clock: true });

export class WebhookTerminalHook implements TerminalHook {
  readonly targetQueue: string;
  readonly urlHeader: string;
  private readonly timeoutMs: number | undefined;
  private readonly headers: Readonly<Record<string, string>>;
  private readonly maxAttempts: number | undefined;
  private readonly clock: Clock;

  /** Throws INVALID_CONFIG for a bad queue name, header name, timeout or attempt count. */
  constructor(options: WebhookTerminalHookOptions) {
    if (typeof options !== 'object' || options === null) throw new InvalidConfigError('WebhookTerminalHook needs options with a targetQueue', { option: 'targetQueue' });
    checkOptions(options, HOOK_OPTION_NAMES, 'WebhookTerminalHook');
    try {
      validateQueueName(options.targetQueue);
    } catch (e) {
      throw new InvalidConfigError((e as Error).message, { option: 'targetQueue' });
    }
    this.targetQueue = options.targetQueue;
    this.urlHeader = options.urlHeader ?? DEFAULT_CALLBACK_URL_HEADER;
    if (typeof this.urlHeader !== 'string' || this.urlHeader.length === 0) throw new InvalidConfigError('urlHeader must be a non-empty string', { option: 'urlHeader' });
    this.timeoutMs = options.timeoutMs;
    this.headers = { ...options.headers };
    this.maxAttempts = options.maxAttempts;
    this.clock = options.clock ?? systemClock;
    // Validate the static parts of the request once, now, rather than at every termination.
    try {
      webhookEnqueueRequest(this.targetQueue, this.request('http://validate.invalid/'), new Uint8Array(0));
    } catch (e) {
      throw new InvalidConfigError((e as Error).message, { option: 'headers/timeoutMs' });
    }
    if (this.maxAttempts !== undefined && (!Number.isSafeInteger(this.maxAttempts) || this.maxAttempts < 1)) {
      throw new InvalidConfigError(`maxAttempts must be a positive integer. maxAttempts=${String(this.maxAttempts)}`, { option: 'maxAttempts' });
    }
  }

  /** Only runs whose headers carry the callback URL get a notification. */
  observes(outcome: RunOutcome): boolean {
    const url = outcome.headers[this.urlHeader];
    return typeof url === 'string' && url.length > 0;
  }

  /** Stages the delivery. Throws a permanent StepError for a bad callback URL. */
  async onTermination(outcome: RunOutcome, effects: TerminalEffects): Promise<void> {
    const url = outcome.headers[this.urlHeader];
    if (typeof url !== 'string' || url.length === 0) return;
    const body = utf8(JSON.stringify(runTerminatedWebhook(outcome, this.clock.now())));
    const request = this.request(url, { 'Workflow-Run-Id': outcome.runId, 'Workflow-Run-Status': outcome.status });
    // The run's trace context rides on the delivery job, for the worker to send on (`traceparent`).
    const traceparent = outcome.headers[HEADER_TRACEPARENT];
    const options = { ...(this.maxAttempts === undefined ? {} : { maxAttempts: this.maxAttempts }), ...(traceparent === undefined ? {} : { headers: { [HEADER_TRACEPARENT]: traceparent } }) };
    try {
      effects.enqueue(webhookEnqueueRequest(this.targetQueue, request, body, options));
    } catch (e) {
      if (isTaqubaError(e, 'INVALID_ARGUMENT')) throw new StepError('permanent', `invalid ${this.urlHeader} header: ${e.message}`, { cause: e });
      throw e;
    }
  }

  private request(url: string, runHeaders: Record<string, string> = {}): { url: string; headers: Record<string, string>; timeoutMs?: number } {
    const headers = { 'Content-Type': 'application/json', ...this.headers, ...runHeaders };
    return this.timeoutMs === undefined ? { url, headers } : { url, headers, timeoutMs: this.timeoutMs };
  }
}
