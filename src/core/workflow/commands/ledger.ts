/**
 * The command ledger: what a command that crossed a boundary answered, kept under the command's
 * id in the same transaction as its effect. A command applied again (its reply was lost, its
 * applier died after applying, a batch was read again after a failover, a caller retried after
 * TIMEOUT) answers from the record and changes nothing.
 *
 * Caller KV (the `workflow/` namespace of the queue handle, shared by its runtimes):
 *   workflow/commands/{id}                  the answer (JSON: format, time, ok and value, or the error)
 *   workflow/command-times/{ts:020}/{id}    empty; orders the answers by time for the retention sweep
 *
 * Applying a command (`applyCommand`): under the command id's lock, a recorded answer is replayed;
 * else the operation runs with a `CommandRecord`, whose `writes(value)` it commits with its
 * effect. An answer that came without an effect (a duplicate submission, a cancel of a finished
 * run) or a refusal that depends on state (INPUT_MISMATCH) is kept afterwards in a transaction of
 * its own: nothing else changed, so there is nothing to be atomic with.
 */
import { fromUtf8, utf8 } from '../../bytes.js';
import type { Clock } from '../../clock.js';
import { CorruptDataError, InvalidArgumentError, isTaqubaError, TaqubaError, type ErrorCode, type ErrorDetails } from '../../errors.js';
import { KeyedMutex } from '../../keyed-mutex.js';
import type { Queue } from '../../queue/index.js';
import { show } from '../../show.js';
import { InputMismatchError } from '../errors.js';

const COMMANDS_PREFIX = 'workflow/commands/';
const COMMAND_TIMES_PREFIX = 'workflow/command-times/';
const TS_WIDTH = 20;
const FORMAT = 1;
const COMMAND_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Refusals kept as answers: they depend on the state at the time, which a later apply may not see. */
const RECORDED_ERRORS: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['INPUT_MISMATCH']);

/** Passed by a carrier (cluster inbox, tab forwarder, command inbox) with the command it applies. */
export interface CommandOptions {
  /**
   * The command's id: 1..128 characters of `[A-Za-z0-9_.:-]`, unique per command (a retry of the
   * same command reuses it). Applying it again answers what the first application answered.
   */
  readonly commandId?: string;
}

type Answer =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly code: ErrorCode; readonly message: string; readonly details: ErrorDetails };

const commandKey = (id: string): Uint8Array => utf8(COMMANDS_PREFIX + id);
const commandTimeKey = (atMs: number, id: string): Uint8Array => utf8(`${COMMAND_TIMES_PREFIX}${String(Math.max(0, Math.floor(atMs))).padStart(TS_WIDTH, '0')}/${id}`);

/** A fresh command id: the clock first (so ids sort about by send time), then 80 random bits. */
export function newCommandId(clock: Clock): string {
  const bytes = new Uint8Array(10);
  crypto.getRandomValues(bytes);
  return `${clock.now().toString(36).padStart(9, '0')}-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** The send time a `newCommandId` id starts with; undefined for an id of another shape. */
export function commandIdTime(id: string): number | undefined {
  const head = /^([0-9a-z]{9,})-[0-9a-f]{20}$/.exec(id)?.[1];
  return head === undefined ? undefined : parseInt(head, 36);
}

export function validateCommandId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || !COMMAND_ID.test(id)) {
    throw new InvalidArgumentError(`command id must be 1..128 characters of [A-Za-z0-9_.:-]. commandId=${show(id)}`, { reason: 'invalid_command_id', commandId: show(id) });
  }
}

/** What one application of a command keeps as its answer. */
export class CommandRecord {
  constructor(
    readonly commandId: string,
    private readonly clock: Clock,
  ) {}

  /** Caller-KV writes that keep `value` as the answer: commit them in the transaction of the command's effect. */
  writes(value: unknown): [Uint8Array, Uint8Array][] {
    return this.encode({ ok: true, value });
  }

  /** @internal The writes of any answer (see applyCommand). */
  encode(answer: Answer): [Uint8Array, Uint8Array][] {
    const at = this.clock.now();
    const body = answer.ok ? { format: FORMAT, at, ok: true, value: answer.value } : { format: FORMAT, at, ok: false, code: answer.code, message: answer.message, details: answer.details };
    return [
      [commandKey(this.commandId), utf8(JSON.stringify(body))],
      [commandTimeKey(at, this.commandId), new Uint8Array(0)],
    ];
  }
}

async function recordedAnswer(queue: Queue, id: string): Promise<Answer | undefined> {
  const bytes = await queue.kvGet(commandKey(id));
  if (bytes === undefined) return undefined;
  let body: { format?: unknown; ok?: unknown; value?: unknown; code?: unknown; message?: unknown; details?: unknown };
  try {
    body = JSON.parse(fromUtf8(bytes)) as typeof body;
  } catch (e) {
    throw new CorruptDataError(`command answer does not decode. commandId=${id}`, { reason: 'command_answer', commandId: id }, e);
  }
  if (body?.format !== FORMAT) throw new CorruptDataError(`command answer of an unknown format. commandId=${id} format=${show(body?.format)}`, { reason: 'command_answer', commandId: id });
  if (body.ok === true) return { ok: true, value: body.value };
  return { ok: false, code: body.code as ErrorCode, message: String(body.message), details: (body.details ?? {}) as ErrorDetails };
}

function replay(answer: Answer): unknown {
  if (answer.ok) return answer.value;
  if (answer.code === 'INPUT_MISMATCH' && typeof answer.details.runId === 'string') throw new InputMismatchError(answer.details.runId);
  throw new TaqubaError(answer.code, answer.message, { details: answer.details });
}

/**
 * Applies a command once (see the module comment). Without a command id, `apply` runs as a plain
 * call with no record. Rejects with INVALID_ARGUMENT for a malformed id, CORRUPT_DATA for an
 * undecodable record, or what `apply` rejects with (a recorded refusal again on every replay).
 */
export async function applyCommand<T>(queue: Queue, clock: Clock, options: CommandOptions | undefined, apply: (record: CommandRecord | undefined) => Promise<T>): Promise<T> {
  if (options !== undefined && (typeof options !== 'object' || options === null)) throw new InvalidArgumentError(`command options must be an object. options=${show(options)}`, { reason: 'invalid_command_options' });
  const id = options?.commandId;
  if (id === undefined) return apply(undefined);
  validateCommandId(id);
  return locksOf(queue).run(id, async () => {
    const found = await recordedAnswer(queue, id);
    if (found) return replay(found) as T;
    const record = new CommandRecord(id, clock);
    let value: T;
    try {
      value = await apply(record);
    } catch (e) {
      if (isTaqubaError(e) && RECORDED_ERRORS.has(e.code)) await keep(queue, record, { ok: false, code: e.code, message: e.message, details: { ...e.details } });
      throw e;
    }
    // Committed with the effect, unless the answer came without one.
    if ((await queue.kvGet(commandKey(id))) === undefined) await keep(queue, record, { ok: true, value });
    return value;
  });
}

const locksByQueue = new WeakMap<Queue, KeyedMutex>();

/** One lock per command id and queue handle (the ledger is one namespace for all its runtimes). */
function locksOf(queue: Queue): KeyedMutex {
  let locks = locksByQueue.get(queue);
  if (!locks) {
    locks = new KeyedMutex();
    locksByQueue.set(queue, locks);
  }
  return locks;
}

async function keep(queue: Queue, record: CommandRecord, answer: Answer): Promise<void> {
  await queue.commitEffects({ kvWrites: record.encode(answer) });
}

/**
 * Deletes the answers recorded before `beforeMs`, oldest first, `batch` per transaction. Resolves
 * with how many went.
 */
export async function sweepCommandAnswers(queue: Queue, beforeMs: number, batch = 500): Promise<number> {
  let swept = 0;
  for (;;) {
    const page = await queue.kvScan(utf8(COMMAND_TIMES_PREFIX), { limit: batch });
    const kvDeletes: Uint8Array[] = [];
    for (const [key] of page.entries) {
      const text = fromUtf8(key).slice(COMMAND_TIMES_PREFIX.length);
      const at = Number(text.slice(0, TS_WIDTH));
      if (!(at < beforeMs)) break;
      kvDeletes.push(key, commandKey(text.slice(TS_WIDTH + 1)));
    }
    if (kvDeletes.length > 0) await queue.commitEffects({ kvDeletes });
    swept += kvDeletes.length / 2;
    if (kvDeletes.length / 2 < batch) return swept;
  }
}
