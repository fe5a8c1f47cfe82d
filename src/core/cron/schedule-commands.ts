/**
 * Schedules changed at run time by the operations (`addSchedule`, `replaceSchedule`,
 * `removeSchedule`): from another process through the runtime's inbox (the CLI's
 * `taquba schedules add`), a tab through the leader, an HTTP client. A schedule arrives as data
 * (`ScheduleDefinition`: the workflow named, its input a plain value) and is checked against the
 * serving host's workflows, so a name its code does not have fails at once (`unknown_workflow`)
 * rather than at every firing.
 *
 * Semantics: a schedule written this way is stored like any other (it survives restarts and fires
 * on the writer's scheduler), marked `viaOperation`, so the host's declared list never deletes
 * it; a schedule of the same name declared in code wins at the host's next start (the declaration
 * replaces it). Each write is applied once per command id, its answer kept in the transaction
 * that writes (or deletes) the schedule (workflow/commands/ledger.ts).
 */
import { InvalidArgumentError } from '../errors.js';
import { show } from '../show.js';
import type { CommandOptions } from '../workflow/commands/ledger.js';
import type { AnyWorkflow } from '../workflow/functions/define.js';
import type { AnySchedule } from './schedule.js';

/** A schedule as data: what `addSchedule` and `replaceSchedule` take. Each firing starts `workflow` with `input`. */
export interface ScheduleDefinition {
  /** 1..100 characters of `[A-Za-z0-9_-]`, unique in the store. */
  readonly name: string;
  /** 5-field POSIX cron: minute hour day-of-month month day-of-week. */
  readonly cron: string;
  /** IANA time zone the expression is read in. Default `UTC`. */
  readonly timezone?: string;
  /** The workflow function each firing starts, by name (its newest registered version) or `name@version`. */
  readonly workflow: string;
  /** Its input, any value the value codec stores. Default undefined. */
  readonly input?: unknown;
  /** Headers of every firing's run (`workflow.*` names are reserved). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Queue priority of every firing (lower is claimed first). */
  readonly priority?: number;
}

/** What a schedule write did: `created`, `replaced` (another definition was stored), `unchanged`. */
export interface ScheduleWriteResult {
  readonly name: string;
  readonly change: 'created' | 'replaced' | 'unchanged';
  /** The schedule's next firing (epoch ms) as stored now. */
  readonly nextFireMs: number;
}

/**
 * The schedule writes as commands (each applied once per command id, the options after its own
 * arguments), as the operations offer them.
 */
export interface ScheduleCommands {
  addSchedule(definition: ScheduleDefinition, options?: CommandOptions): Promise<ScheduleWriteResult>;
  replaceSchedule(definition: ScheduleDefinition, options?: CommandOptions): Promise<ScheduleWriteResult>;
  removeSchedule(name: string, options?: CommandOptions): Promise<boolean>;
}

const DEFINITION_KEYS = ['name', 'cron', 'timezone', 'workflow', 'input', 'headers', 'priority'] as const;

function invalid(name: unknown, rule: string, extra: Record<string, string> = {}): InvalidArgumentError {
  return new InvalidArgumentError(`invalid schedule: ${rule}. schedule=${show(name)}`, { reason: 'invalid_schedule', schedule: show(name), ...extra });
}

/** The registered workflow `name` names: `name@version`, or the newest version of `name`. Undefined when none. */
function findWorkflow(workflows: readonly AnyWorkflow[], named: string): AnyWorkflow | undefined {
  const at = /^(.+)@([0-9]+)$/.exec(named);
  if (at) return workflows.find((w) => w.name === at[1] && w.version === Number(at[2]));
  return workflows.filter((w) => w.name === named).reduce<AnyWorkflow | undefined>((newest, w) => (newest === undefined || w.version > newest.version ? w : newest), undefined);
}

/**
 * The `Schedule` a definition stands for, with the workflow found among `workflows` (the host's).
 * The rest is checked where the schedule is resolved (`resolveSchedule`: name, expression, zone,
 * headers, priority, input). Throws INVALID_ARGUMENT: reason `invalid_schedule` (not an object, an
 * unknown key, no workflow name) or `unknown_workflow` (naming what the host has).
 */
export function scheduleOfDefinition(definition: ScheduleDefinition, workflows: readonly AnyWorkflow[]): AnySchedule {
  if (typeof definition !== 'object' || definition === null || Array.isArray(definition)) throw invalid(undefined, `a schedule definition must be an object, not ${show(definition)}`);
  const { name, cron, timezone, workflow, input, headers, priority } = definition;
  for (const key of Object.keys(definition)) {
    if (!(DEFINITION_KEYS as readonly string[]).includes(key)) throw invalid(name, `unknown key ${JSON.stringify(key)} (known: ${DEFINITION_KEYS.join(', ')})`, { key });
  }
  if (typeof workflow !== 'string' || workflow === '') throw invalid(name, `workflow must name a workflow function (name or name@version), not ${show(workflow)}`, { key: 'workflow' });
  const found = findWorkflow(workflows, workflow);
  if (found === undefined) {
    const registered = workflows.map((w) => `${w.name}@${w.version}`).join(', ') || 'none';
    throw new InvalidArgumentError(`workflow ${workflow} is not registered on the host serving this schedule (registered: ${registered}). schedule=${show(name)}`, {
      reason: 'unknown_workflow',
      workflow,
      schedule: show(name),
    });
  }
  return {
    name,
    cron,
    ...(timezone === undefined ? {} : { timezone }),
    ...(headers === undefined ? {} : { headers }),
    ...(priority === undefined ? {} : { priority }),
    start: [found, input],
  };
}
