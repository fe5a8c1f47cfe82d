/**
 * Commands of the layers above the runtime that its inbox carries all the same (the cron
 * schedules' `addSchedule`, `replaceSchedule`, `removeSchedule`): a command of type `operation`
 * names a method, and the handler the serving host registered for that method on its runtime
 * applies it, once per command id as every command (the handler runs it through the ledger). This
 * layer knows neither the methods nor their arguments; the host that serves them registers them
 * (core/operations/runtime-host.ts), so a runtime without such a host answers INVALID_ARGUMENT.
 */
import { InvalidArgumentError } from '../../errors.js';
import { show } from '../../show.js';
import type { CommandOptions } from './ledger.js';

/** Applies one extension command: its arguments, then the command options carrying its id. */
export type CommandExtension = (args: readonly unknown[], options: CommandOptions | undefined) => Promise<unknown>;

const byRuntime = new WeakMap<object, Map<string, CommandExtension>>();

/** Makes `runtime`'s inbox (and every carrier applying commands to it) apply `method` with `apply`. */
export function registerCommandExtension(runtime: object, method: string, apply: CommandExtension): void {
  let handlers = byRuntime.get(runtime);
  if (!handlers) {
    handlers = new Map();
    byRuntime.set(runtime, handlers);
  }
  handlers.set(method, apply);
}

/** Applies `method` on `runtime`; INVALID_ARGUMENT (reason `unknown_operation`) when nothing registered it there. */
export function applyCommandExtension(runtime: object, method: string, args: readonly unknown[], options: CommandOptions | undefined): Promise<unknown> {
  const apply = byRuntime.get(runtime)?.get(method);
  if (apply === undefined) {
    return Promise.reject(
      new InvalidArgumentError(`the runtime answering this command does not serve this operation (it is served by a runtime host that has it, e.g. one with schedules). method=${show(method)}`, {
        reason: 'unknown_operation',
        method: String(method),
      }),
    );
  }
  return apply(args, options);
}
