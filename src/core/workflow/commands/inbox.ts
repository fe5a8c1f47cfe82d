/**
 * An inbox: commands for the runtime that applies them, carried as objects (RFC 0003 "Commands
 * through the inbox"; the cluster has one per shard, a runtime one for other processes).
 *
 * Sender (`CommandSender`): commands for one inbox are batched like group commits: while a
 * batch is out, new commands for that inbox wait and go together in the next one. A batch is one
 * create-only `<inbox>/<batch id>`; the sender polls `<replies>/<batch id>`, reads it, deletes it.
 * Applier (`applyInbox`): for each batch in key order: a reply already there means it was applied
 * before a crash cut the delete short: delete the batch. Else apply its commands (in order per
 * run or key, concurrently otherwise; each once per command id, see ledger.ts), create the reply,
 * delete the batch. A store error leaves the batch for the next pass, which answers the commands
 * already applied from their records.
 */
import type { Clock } from '../../clock.js';
import { TaqubaError, type ErrorCode, type ErrorDetails } from '../../errors.js';
import { createObject } from '../../objects/create-object.js';
import type { ObjectStore } from '../../objects/object-store.js';
import { commandIdTime, newCommandId } from './ledger.js';
import { applyRunCommand, decodeCommands, decodeReplies, encodeCommands, encodeReplies, replyForError, type CommandReply, type CommandTargets, type RunCommand } from './run-command.js';

/** Polls back off up to this many poll intervals (senders waiting for replies, appliers of empty inboxes). */
export const MAX_BACKOFF_FACTOR = 8;

/** The most commands in one inbox object. */
const MAX_BATCH = 256;

/** Where one inbox keeps its batches and their replies. */
export interface InboxLayout {
  /** Batches live at `inboxPrefix + batchId`. */
  readonly inboxPrefix: string;
  /** Replies live at `repliesPrefix + batchId`. */
  readonly repliesPrefix: string;
}

/**
 * Applies the inbox objects `keys` (from a listing of the inbox, in key order) to `targets`.
 * Resolves with the number of commands applied; rejects with store errors (the object stays for
 * the next pass).
 */
export async function applyInbox(store: ObjectStore, layout: InboxLayout, keys: readonly string[], targets: CommandTargets, signal: AbortSignal): Promise<number> {
  let applied = 0;
  for (const key of keys) {
    if (signal.aborted) break;
    const replyKey = layout.repliesPrefix + key.slice(layout.inboxPrefix.length);
    if ((await store.get(replyKey)) === undefined) {
      const stored = await store.get(key);
      if (stored === undefined) continue; // another pass (a previous owner) finished it
      const commands = decodeCommands(stored.data, key);
      const replies: CommandReply[] = new Array(commands.length);
      // Commands on different runs or keys apply concurrently, so their commits share WAL puts;
      // those on one run or key apply in order.
      const byTarget = new Map<string, number[]>();
      commands.forEach((c, i) => {
        // Operations of the layers above are applied in order among themselves (their targets are theirs to know).
        const target = c.type === 'signal' ? `key:${c.correlationKey}` : c.type === 'retryDeadStep' ? `job:${c.jobId}` : c.type === 'operation' ? 'operation' : `run:${c.runId}`;
        byTarget.set(target, [...(byTarget.get(target) ?? []), i]);
      });
      await Promise.all(
        [...byTarget.values()].map(async (indexes) => {
          for (const i of indexes) {
            try {
              replies[i] = { ok: true, value: await applyRunCommand(targets, commands[i]!) };
            } catch (e) {
              replies[i] = replyForError(e) ?? rethrow(e);
            }
          }
        }),
      );
      applied += commands.length;
      await createObject(store, replyKey, encodeReplies(replies));
    }
    await store.delete(key);
  }
  return applied;
}

function rethrow(e: unknown): never {
  throw e;
}

/**
 * Deletes the replies of an inbox whose batch was sent before `sentBeforeMs` (by the batch id's
 * time): their senders stopped waiting long ago (TIMEOUT, or the sender died), so nobody will
 * read or delete them. Resolves with how many went; rejects with store errors.
 */
export async function collectOrphanReplies(store: ObjectStore, layout: InboxLayout, sentBeforeMs: number): Promise<number> {
  const prefix = layout.repliesPrefix;
  const old: string[] = [];
  for await (const info of store.list(prefix)) {
    const sentAt = commandIdTime(info.key.slice(prefix.length));
    // Ids are time first, so the listing is in send order: the rest are newer.
    if (sentAt === undefined) continue;
    if (sentAt >= sentBeforeMs) break;
    old.push(info.key);
  }
  for (const key of old) await store.delete(key);
  return old.length;
}

/**
 * A batch sent whose reply did not come: each of its commands gets its own error, naming its
 * command id, so the caller can send that command again with the same id (applied at most once).
 */
class UnansweredBatch extends Error {
  constructor(
    readonly code: 'TIMEOUT' | 'CLOSED',
    readonly text: string,
    readonly batchId: string,
  ) {
    super(text);
  }

  forCommand(command: RunCommand, where: ErrorDetails): TaqubaError {
    const id = command.commandId;
    const retry = id === undefined ? '' : `; send it again with options.commandId=${id} to have it applied once`;
    return new TaqubaError(this.code, `${this.text}${retry}. batch=${this.batchId}`, { details: { ...where, batchId: this.batchId, commandId: id } });
  }
}

interface Waiting {
  readonly command: RunCommand;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface CommandSenderOptions {
  readonly clock: Clock;
  readonly pollMs: number;
  readonly timeoutMs: number;
  /** Aborted when the sender's owner stops: waiting commands reject with CLOSED. */
  readonly signal: AbortSignal;
}

/** Who answers an inbox, for messages and error details (e.g. `the owner of shard 3`, `{ shard: 3 }`). */
export interface InboxTarget extends InboxLayout {
  readonly describe: string;
  readonly details: ErrorDetails;
}

export class CommandSender {
  private readonly waiting = new Map<string, { readonly target: InboxTarget; readonly queue: Waiting[] }>();
  private readonly sending = new Set<string>();

  constructor(
    private readonly store: ObjectStore,
    private readonly options: CommandSenderOptions,
  ) {}

  /**
   * Sends `command` to the inbox of `target` and waits for its answer. Rejects with the typed error
   * the applier answered with, TIMEOUT after `timeoutMs` (the command may still apply later: its
   * error names the command id to send it again with), CLOSED when the sender stops first, or
   * store errors.
   */
  send(target: InboxTarget, command: RunCommand): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const key = target.inboxPrefix;
      const entry = this.waiting.get(key) ?? { target, queue: [] };
      entry.queue.push({ command, resolve, reject });
      this.waiting.set(key, entry);
      if (!this.sending.has(key)) void this.drain(key);
    });
  }

  private async drain(key: string): Promise<void> {
    this.sending.add(key);
    try {
      for (;;) {
        const entry = this.waiting.get(key);
        if (!entry || entry.queue.length === 0) return;
        const batch = entry.queue.splice(0, MAX_BATCH);
        try {
          const replies = await this.sendBatch(entry.target, batch.map((w) => w.command));
          batch.forEach((w, i) => {
            const reply = replies[i];
            if (reply === undefined) w.reject(new TaqubaError('CORRUPT_DATA', `reply from ${entry.target.describe} is missing an answer. index=${i}`, { details: { ...entry.target.details, index: i } }));
            else if (reply.ok) w.resolve(reply.value);
            else w.reject(new TaqubaError(reply.code as ErrorCode, reply.message, { details: reply.details as ErrorDetails }));
          });
        } catch (e) {
          for (const w of batch) w.reject(e instanceof UnansweredBatch ? e.forCommand(w.command, entry.target.details) : e);
        }
      }
    } finally {
      this.sending.delete(key);
    }
  }

  private async sendBatch(target: InboxTarget, commands: RunCommand[]): Promise<CommandReply[]> {
    const o = this.options;
    const id = newCommandId(o.clock);
    const replyKey = target.repliesPrefix + id;
    await createObject(this.store, target.inboxPrefix + id, encodeCommands(commands));
    const deadline = o.clock.now() + o.timeoutMs;
    // The first polls come quickly (the applier looks within its inbox poll), later ones back
    // off, so waiting senders do not flood the store with GETs.
    let waitMs = o.pollMs;
    for (;;) {
      const stored = await this.store.get(replyKey);
      if (stored !== undefined) {
        const replies = decodeReplies(stored.data, replyKey);
        await this.store.delete(replyKey);
        return replies;
      }
      if (o.clock.now() >= deadline) throw new UnansweredBatch('TIMEOUT', `no reply from ${target.describe} within ${o.timeoutMs} ms; the command may still apply`, id);
      if (o.signal.aborted) throw new UnansweredBatch('CLOSED', `stopped while waiting for a reply from ${target.describe}; the command may still apply`, id);
      // No abort signal on the sleep: many waiting batches would each add a listener to it.
      await o.clock.sleep(waitMs);
      waitMs = Math.min(Math.round(waitMs * 1.5), o.pollMs * MAX_BACKOFF_FACTOR);
    }
  }
}
