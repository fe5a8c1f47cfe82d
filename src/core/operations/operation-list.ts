/**
 * The one list of operations (`RuntimeOperations`), each with its kind. Carriers and views derive
 * from it (the browser's worker facade, page client and tab forwarder) instead of naming the
 * operations again; the compiler holds the list to the interface, entry for entry.
 *
 * Kinds:
 * - `read`: changes nothing, so it may be sent again to whichever runtime serves next.
 * - `command`: a write applied once per command id (ledger.ts); `arity` is the number of its own
 *   arguments, after which a carrier passes `{ commandId }`. Sent again with the same id, it
 *   answers from the record the first application kept.
 * - `write`: a write without a command id; `resend` says whether sending it again after a lost
 *   answer is harmless.
 */
import { InvalidArgumentError } from '../errors.js';
import { show } from '../show.js';
import type { CommandOptions } from '../workflow/commands/ledger.js';
import type { CommandRuntime } from '../workflow/commands/run-command.js';
import type { OperationName, RuntimeOperations } from './operations.js';
import type { ScheduleCommands } from '../cron/index.js';

type CommandTraits = { readonly kind: 'command'; readonly arity: number };
/** A command of the host above the runtime (its cron scheduler): the runtime's inbox carries it as an extension (command-extensions.ts). */
type HostCommandTraits = CommandTraits & { readonly host: true };
export type OperationTraits = { readonly kind: 'read' } | CommandTraits | { readonly kind: 'write'; readonly resend: boolean };

/**
 * The operations applied once per command id: the write operations the runtime's command inbox
 * carries (`CommandRuntime`, in the workflow layer below, and the host's schedule writes, which
 * the inbox carries as extensions the host registers). The list marks exactly these as
 * `command` (checked where `OPERATIONS` is declared), and each must be one of `RuntimeOperations`
 * (checked by `isCommand`).
 */
export type CommandName = keyof CommandRuntime | HostCommandName;

/** The commands the runtime host applies rather than the runtime (the schedule writes): marked `host` in the list. */
export type HostCommandName = keyof ScheduleCommands;

const READ = { kind: 'read' } as const;

export const OPERATIONS = {
  submit: { kind: 'command', arity: 1 },
  status: READ,
  cancel: { kind: 'command', arity: 1 },
  signal: { kind: 'command', arity: 2 },
  // Clearing a cleared signal answers false.
  clearSignal: { kind: 'write', resend: true },
  listRuns: READ,
  listFinishedRuns: READ,
  getFinishedRun: READ,
  runWait: READ,
  kvGet: READ,
  kvScan: READ,
  memoGet: READ,
  listDeadSteps: READ,
  getRun: READ,
  runTimeline: READ,
  listMemo: READ,
  bufferedSignal: READ,
  queueCounts: READ,
  listSchedules: READ,
  addSchedule: { kind: 'command', arity: 1, host: true },
  replaceSchedule: { kind: 'command', arity: 1, host: true },
  removeSchedule: { kind: 'command', arity: 1, host: true },
  retryDeadStep: { kind: 'command', arity: 1 },
  // Deleting a deleted dead job answers false.
  discardDeadStep: { kind: 'write', resend: true },
  // A hand-off export of a moved run answers the archive it left with; a copy changes nothing.
  exportRun: { kind: 'write', resend: true },
  // Importing an archive again answers its first import.
  importRun: { kind: 'write', resend: true },
  listMovedRuns: READ,
  // Confirming a confirmed delivery answers true again.
  confirmHandOff: { kind: 'write', resend: true },
  // Without an idempotency key the job id is drawn where it is applied: a second send may start a second job.
  jobSubmit: { kind: 'write', resend: false },
  jobWait: READ,
  jobFetch: READ,
  jobStatus: READ,
  // Cancelling an ended job answers false.
  jobCancel: { kind: 'write', resend: true },
  // A carried batch submission always has a batch id (the browser host draws one), so it is idempotent.
  bulkSubmit: { kind: 'write', resend: true },
  bulkProgress: READ,
  bulkStatus: READ,
} as const satisfies { readonly [M in OperationName]: M extends HostCommandName ? HostCommandTraits : M extends CommandName ? CommandTraits : Exclude<OperationTraits, CommandTraits> };

/** Every operation name, in the list's order. */
export const OPERATION_NAMES: readonly OperationName[] = Object.keys(OPERATIONS) as OperationName[];

/** The traits of `name`; undefined for a name not on the list (a carrier's message from a sender that knows other operations). */
function traitsOf(name: string): OperationTraits | undefined {
  return Object.hasOwn(OPERATIONS, name) ? OPERATIONS[name as OperationName] : undefined;
}

export function isCommand(name: OperationName): name is CommandName {
  return traitsOf(name)?.kind === 'command';
}

/** The command names, in the list's order. */
export const COMMAND_NAMES: readonly CommandName[] = OPERATION_NAMES.filter(isCommand);

export function isHostCommand(name: OperationName): name is HostCommandName {
  const traits = traitsOf(name);
  return traits?.kind === 'command' && 'host' in traits;
}

/** The commands the runtime host applies (carried by the runtime's inbox as extensions), in the list's order. */
export const HOST_COMMAND_NAMES: readonly HostCommandName[] = OPERATION_NAMES.filter(isHostCommand);

/**
 * The commands as a view that supplies their command options itself offers them: the operations'
 * own arguments. A `CommandRuntime` is one (its methods take those arguments, then the options,
 * and answer the same; the operation-list test holds it to that), so a view applies one through
 * `applyOperation` (the CLI's `signal`, `cancel`, `retry`). The host's commands are not the
 * runtime's: they are left out.
 */
export type RuntimeCommands = Pick<RuntimeOperations, keyof CommandRuntime>;

/** Whether a call left unanswered by a runtime that went away may be sent to the next one. */
export function isResendable(name: OperationName): boolean {
  const traits = traitsOf(name);
  return traits !== undefined && (traits.kind !== 'write' || traits.resend);
}

/**
 * One call of an operation, as data. A command (`isCommand`) carries a command id, kept with its
 * effect by the serving runtime: sent again to a new one, it applies once.
 */
export type OperationCall = { [M in OperationName]: { readonly method: M; readonly args: Parameters<RuntimeOperations[M]>; readonly commandId?: string } }[OperationName];

/**
 * Runs `call` on `ops` (the operations, or those of them the call may name), passing a command's id
 * as its command options (after its own arguments, some of which may be omitted).
 */
export function applyOperation<M extends OperationName>(ops: NoInfer<Pick<RuntimeOperations, M>>, call: OperationCall & { readonly method: M }): Promise<unknown> {
  const traits = traitsOf(call.method);
  const method = traits === undefined ? undefined : (ops[call.method] as (...args: unknown[]) => Promise<unknown>);
  if (traits === undefined || typeof method !== 'function') {
    return Promise.reject(new InvalidArgumentError(`no such operation. method=${show(call.method)}`, { reason: 'unknown_operation', method: String(call.method) }));
  }
  const args: unknown[] = [...call.args];
  if (traits.kind === 'command' && call.commandId !== undefined) {
    args.length = traits.arity;
    args.push({ commandId: call.commandId } satisfies CommandOptions);
  }
  return method.apply(ops, args);
}
