/**
 * `RuntimeClient`: the write operations of a runtime that runs in another process, on the same
 * store (a web server that takes approvals beside a worker process; the CLI beside a live app).
 * Each call is a command sent through the runtime's inbox (runtime-inbox.ts) and answered by the
 * running runtime with the real outcome. Every command has an id kept with its effect, so a call
 * sent again with the id its TIMEOUT named is applied at most once.
 */
import { systemClock, type Clock } from '../../clock.js';
import { ClosedError, InvalidConfigError } from '../../errors.js';
import type { ObjectStore } from '../../objects/object-store.js';
import { checkObjectStore, checkOptions, numberRule, optionNames } from '../../options.js';
import { show } from '../../show.js';
import { DEFAULT_QUEUE_NAME } from '../constants.js';
import type { DeadStepRetry } from '../steps/dead-step-retry.js';
import { checkCorrelationKey } from '../steps/outcome.js';
import { createRunIdGenerator } from '../runs/run-ids.js';
import type { SignalOutcome } from '../runs/signals.js';
import { validateSpec, type RunSpec, type SubmitOutcome } from '../runs/submit.js';
import { checkKvValue, validateRunId } from '../validation.js';
import { signalBufferKey } from '../keys.js';
import { validateLookupId } from '../../queue/records/validation.js';
import { CommandSender, type InboxTarget } from './inbox.js';
import { newCommandId, validateCommandId, type CommandOptions } from './ledger.js';
import { submitCommand, type CommandRuntime, type RunCommand } from './run-command.js';
import { runtimeInbox } from './runtime-inbox.js';

export interface RuntimeClientOptions {
  /** The engine's path: the `Queue.open` path of the process that runs the runtime. */
  readonly path: string;
  /** The runtime's queue name. Default `workflow-steps`. */
  readonly queueName?: string;
  /** How long a call waits for the runtime's answer before TIMEOUT. Default 30 s. */
  readonly timeoutMs?: number;
  /** First wait between looks for the answer (backing off to 8 times this). Default 50 ms. */
  readonly pollMs?: number;
  readonly clock?: Clock;
}

const OPTION_NAMES = optionNames<RuntimeClientOptions>({ path: true, queueName: true, timeoutMs: true, pollMs: true, clock: true });

function positiveMs(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const rule = numberRule(value, { min: 1 });
  if (rule !== undefined) throw new InvalidConfigError(`${option} ${rule} (milliseconds). ${option}=${show(value)}`, { option, value: show(value) });
  return value as number;
}

export class RuntimeClient implements CommandRuntime {
  private readonly stop = new AbortController();
  private readonly sender: CommandSender;
  private readonly inbox: InboxTarget;
  private readonly clock: Clock;
  private readonly nextRunId: () => string;

  /**
   * A client of the runtime on queue `queueName` of the engine at `path` in `store`. No I/O until
   * a call. INVALID_ARGUMENT when `store` is not an ObjectStore, INVALID_CONFIG for bad options.
   * @example
   * const client = new RuntimeClient(store, { path: 'app' });
   * await client.signal('approve:report-44', new TextEncoder().encode('yes'));
   */
  constructor(store: ObjectStore, options: RuntimeClientOptions) {
    checkObjectStore(store);
    if (typeof options !== 'object' || options === null) throw new InvalidConfigError(`options must be an object with a path. options=${show(options)}`);
    checkOptions(options, OPTION_NAMES, 'runtime client');
    if (typeof options.path !== 'string' || options.path.length === 0) throw new InvalidConfigError(`path must be the engine's path (a non-empty string). path=${show(options.path)}`, { option: 'path' });
    const queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
    if (typeof queueName !== 'string' || !/^[A-Za-z0-9_.-]{1,128}$/.test(queueName)) throw new InvalidConfigError(`queueName must be a queue name. queueName=${show(queueName)}`, { option: 'queueName' });
    this.clock = options.clock ?? systemClock;
    this.inbox = runtimeInbox(options.path, queueName);
    this.nextRunId = createRunIdGenerator(this.clock);
    this.sender = new CommandSender(store, {
      clock: this.clock,
      pollMs: positiveMs('pollMs', options.pollMs, 50),
      timeoutMs: positiveMs('timeoutMs', options.timeoutMs, 30_000),
      signal: this.stop.signal,
    });
  }

  private send<T>(command: RunCommand, options: CommandOptions | undefined): Promise<T> {
    if (this.stop.signal.aborted) return Promise.reject(new ClosedError('runtime client is closed'));
    const commandId = options?.commandId ?? newCommandId(this.clock);
    validateCommandId(commandId);
    return this.sender.send(this.inbox, { ...command, commandId }) as Promise<T>;
  }

  /**
   * `WorkflowRuntime.submit` in the process that runs the runtime. A spec without a run id gets
   * one here. Rejects like it, plus TIMEOUT (no answer within `timeoutMs`: is the runtime
   * running? The command may still apply; send it again with `details.commandId`) and CLOSED.
   */
  async submit(spec: RunSpec, options?: CommandOptions): Promise<SubmitOutcome> {
    validateSpec(spec, undefined);
    const runId = spec.runId ?? this.nextRunId();
    return this.send(submitCommand({ ...spec, runId }), options);
  }

  /** `WorkflowRuntime.signal` in the process that runs the runtime (errors as `submit`). */
  async signal(correlationKey: string, payload: Uint8Array, options?: CommandOptions): Promise<SignalOutcome> {
    checkCorrelationKey(correlationKey);
    checkKvValue(signalBufferKey(correlationKey), payload);
    return this.send({ type: 'signal', correlationKey, payload }, options);
  }

  /** `WorkflowRuntime.cancel` in the process that runs the runtime (errors as `submit`). */
  async cancel(runId: string, options?: CommandOptions): Promise<boolean> {
    validateRunId(runId);
    return this.send({ type: 'cancel', runId }, options);
  }

  /** `WorkflowRuntime.retryDeadStep` in the process that runs the runtime (errors as `submit`). */
  async retryDeadStep(jobId: string, options?: CommandOptions): Promise<DeadStepRetry> {
    validateLookupId(jobId);
    return this.send({ type: 'retryDeadStep', jobId }, options);
  }

  /**
   * @internal An operation of the host above the runtime (`addSchedule`, `replaceSchedule`,
   * `removeSchedule`: command-extensions.ts), applied once per command id by the live host that
   * registered it. Rejects like that operation, plus TIMEOUT and CLOSED (as `submit`), and
   * INVALID_ARGUMENT (`unknown_operation`) when the runtime's host does not serve it.
   */
  sendOperation(method: string, args: readonly unknown[], options?: CommandOptions): Promise<unknown> {
    return this.send({ type: 'operation', method, args: [...args] }, options);
  }

  /** Stops waiting: calls still waiting reject with CLOSED (their commands may still apply). */
  close(): void {
    this.stop.abort();
  }
}
