/**
 * Run operations as data: the write operations that a carrier (the cluster's shard inboxes, a
 * runtime's command inbox for other processes) takes to the runtime that applies them, and their
 * answers. Each command carries the id under which its answer is kept with its effect (ledger.ts).
 *
 * Stored as MessagePack records `{ kind, format, body }` (kinds `command` and `reply`, format 1;
 * the cluster wrote the same records before this module was shared).
 */
import { InvalidArgumentError, isTaqubaError, type ErrorCode } from '../../errors.js';
import { decodeKindRecord, encodeKindRecord, malformedField } from '../../kind-records.js';
import type { RunSpec, SubmitOutcome } from '../runs/submit.js';
import type { FlowControl } from '../flow/flow-options.js';
import type { SignalOutcome } from '../runs/signals.js';
import type { DeadStepRetry } from '../steps/dead-step-retry.js';
import type { CommandOptions } from './ledger.js';
import { kvKeyBytes } from '../validation.js';
import { applyCommandExtension } from './command-extensions.js';

const FORMAT = 1;

/** A run's submission as data: `RunSpec` with its run id drawn and KV keys as bytes. */
interface SubmitFields extends FlowControl {
  readonly runId: string;
  readonly input?: Uint8Array;
  readonly headers?: Record<string, string>;
  readonly priority?: number;
  readonly maxAttemptsPerStep?: number;
  readonly runAt?: number;
}

/** A write operation for the runtime that owns a run. Bytes stay bytes (MessagePack carries them). */
export type RunCommand = { readonly commandId?: string } & (
  | (SubmitFields & { readonly type: 'submit'; readonly kvWrites?: [Uint8Array, Uint8Array][] })
  /** A typed job's run: `input` is the job envelope (name and encoded input). */
  | (SubmitFields & { readonly type: 'submitJob'; readonly input: Uint8Array })
  | { readonly type: 'signal'; readonly correlationKey: string; readonly payload: Uint8Array }
  | { readonly type: 'cancel'; readonly runId: string }
  /** Cancels a typed job's run (in the jobs runtime). */
  | { readonly type: 'cancelJob'; readonly runId: string }
  /** Requeues a dead job of the runtime's queue (`retryDeadStep`). */
  | { readonly type: 'retryDeadStep'; readonly jobId: string }
  /** An operation of a layer above the runtime (`addSchedule`, ...), applied by the handler its host registered (command-extensions.ts). */
  | { readonly type: 'operation'; readonly method: string; readonly args: readonly unknown[] }
);

/** What a command answers: the operation's value, or the typed error it rejected with. */
export type CommandReply =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly code: string; readonly message: string; readonly details: Record<string, unknown> };

/**
 * What a command applies to: a runtime's write operations, each applied once per command id (the
 * options, after the operation's own arguments). The operation list marks exactly these as its
 * commands, with the same arguments and answers (core/operations/operation-list.ts: that layer
 * sits above this one, so it checks this interface rather than this one deriving from it).
 */
export interface CommandRuntime {
  submit(spec: RunSpec, options?: CommandOptions): Promise<SubmitOutcome>;
  signal(correlationKey: string, payload: Uint8Array, options?: CommandOptions): Promise<SignalOutcome>;
  cancel(runId: string, options?: CommandOptions): Promise<boolean>;
  retryDeadStep(jobId: string, options?: CommandOptions): Promise<DeadStepRetry>;
}

export interface CommandTargets {
  readonly runtime: CommandRuntime;
  /** The typed-jobs runtime, when the host runs jobs. */
  readonly jobs: CommandRuntime | undefined;
}

/** A `submit` command from a spec whose run id was drawn (KV keys as bytes, only the fields set). */
export function submitCommand(spec: RunSpec & { readonly runId: string }): RunCommand {
  return {
    type: 'submit',
    runId: spec.runId,
    ...(spec.input === undefined ? {} : { input: spec.input }),
    ...(spec.headers === undefined ? {} : { headers: { ...spec.headers } }),
    ...(spec.priority === undefined ? {} : { priority: spec.priority }),
    ...(spec.maxAttemptsPerStep === undefined ? {} : { maxAttemptsPerStep: spec.maxAttemptsPerStep }),
    ...(spec.runAt === undefined ? {} : { runAt: spec.runAt }),
    ...(spec.concurrency === undefined ? {} : { concurrency: spec.concurrency }),
    ...(spec.rateLimit === undefined ? {} : { rateLimit: spec.rateLimit }),
    ...(spec.debounce === undefined ? {} : { debounce: spec.debounce }),
    ...(spec.kvWrites === undefined ? {} : { kvWrites: [...spec.kvWrites].map(([k, v]) => [kvKeyBytes(k), v] as [Uint8Array, Uint8Array]) }),
  };
}

/** Applies one command to its runtime (with its id, so it applies once). */
export async function applyRunCommand(targets: CommandTargets, command: RunCommand): Promise<unknown> {
  const runtime = targets.runtime;
  const once = command.commandId === undefined ? undefined : { commandId: command.commandId };
  switch (command.type) {
    case 'submit': {
      const { type: _type, commandId: _id, ...spec } = command;
      return runtime.submit(spec, once);
    }
    case 'submitJob': {
      const { type: _type, commandId: _id, ...spec } = command;
      return jobsOf(targets).submit(spec, once);
    }
    case 'signal':
      return runtime.signal(command.correlationKey, command.payload, once);
    case 'cancel':
      return runtime.cancel(command.runId, once);
    case 'cancelJob':
      return jobsOf(targets).cancel(command.runId, once);
    case 'retryDeadStep':
      return runtime.retryDeadStep(command.jobId, once);
    case 'operation':
      return applyCommandExtension(runtime, command.method, command.args, once);
  }
}

function jobsOf(targets: CommandTargets): CommandRuntime {
  if (targets.jobs === undefined) throw new InvalidArgumentError('the runtime host answering this command runs no typed jobs (the jobs option)', { reason: 'unregistered_job' });
  return targets.jobs;
}

/**
 * Errors a command answers with instead of being retried: the caller's mistakes and the state it
 * met (a refusal such as a dead step that is gone, or a schedule defined otherwise: applying the
 * batch again would refuse again, and keep the inbox blocked behind it).
 */
const ANSWERED_ERRORS: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['INVALID_ARGUMENT', 'INPUT_MISMATCH', 'CORRUPT_DATA', 'CONFLICT', 'NOT_FOUND', 'ALREADY_EXISTS']);

/** The reply for a command that ended with `error`, or undefined when the error should be retried (store errors, CLOSED, FENCED). */
export function replyForError(error: unknown): CommandReply | undefined {
  if (!isTaqubaError(error) || !ANSWERED_ERRORS.has(error.code)) return undefined;
  return { ok: false, code: error.code, message: error.message, details: { ...error.details } };
}

type CommandType = RunCommand['type'];

/**
 * The type each command is stored under. The dead-step retry keeps the name format 1 was first
 * written with, so the records stay as they were: an applier of an earlier version reads them (it
 * would reject an unknown type, and the batch would then block its inbox).
 */
const STORED_TYPES: { readonly [T in CommandType]: string } = {
  submit: 'submit',
  submitJob: 'submitJob',
  signal: 'signal',
  cancel: 'cancel',
  cancelJob: 'cancelJob',
  retryDeadStep: 'retryDeadJob',
  operation: 'operation',
};
const TYPES_BY_STORED: ReadonlyMap<string, CommandType> = new Map(Object.entries(STORED_TYPES).map(([type, stored]) => [stored, type as CommandType]));

const decode = (kind: 'command' | 'reply', bytes: Uint8Array, key: string): Record<string, unknown> => decodeKindRecord(bytes, key, kind, FORMAT, 'command object');

function storedCommand(command: RunCommand): unknown {
  const stored = STORED_TYPES[command.type];
  return stored === command.type ? command : { ...command, type: stored };
}

/** One inbox object: the commands one sender batched for one runtime, applied in order per run or key. */
export const encodeCommands = (commands: readonly RunCommand[]): Uint8Array => encodeKindRecord('command', FORMAT, { commands: commands.map(storedCommand) });
export function decodeCommands(bytes: Uint8Array, key: string): RunCommand[] {
  const b = decode('command', bytes, key);
  if (!Array.isArray(b.commands)) throw malformedField('command', key, 'commands');
  return (b.commands as { type?: unknown; commandId?: unknown }[]).map((c) => {
    const type = TYPES_BY_STORED.get(String(c?.type));
    if (type === undefined || (c.commandId !== undefined && typeof c.commandId !== 'string')) throw malformedField('command', key, 'commands');
    return (type === c.type ? c : { ...c, type }) as RunCommand;
  });
}

/** One reply object: the answers to an inbox object's commands, in the same order. */
export const encodeReplies = (replies: readonly CommandReply[]): Uint8Array => encodeKindRecord('reply', FORMAT, { replies });
export function decodeReplies(bytes: Uint8Array, key: string): CommandReply[] {
  const b = decode('reply', bytes, key);
  if (!Array.isArray(b.replies)) throw malformedField('reply', key, 'replies');
  return b.replies as CommandReply[];
}
