/**
 * Commands for a shard's owner, through the shard's inbox (RFC 0003 "Commands through the inbox").
 *
 * Sender (`CommandSender`): commands for one shard are batched like group commits: while a
 * batch is out, new commands for that shard wait and go together in the next one. A batch is
 * one create-only `inbox/<shard>/<id>`; the sender polls `replies/<id>`, reads it, deletes it.
 * Owner (`applyInbox`): for each batch in key order: a reply already there means it was applied
 * before a crash cut the delete short: delete the batch. Else apply its commands (in order per
 * run or key, concurrently otherwise),
 * create the reply, delete the batch. A store error leaves the batch for the next pass.
 */
import { InvalidArgumentError, isTaqubaError, TaqubaError, type ErrorCode, type ErrorDetails } from '../errors.js';
import type { Clock } from '../clock.js';
import type { ObjectStore } from '../objects/object-store.js';
import { createObject } from '../objects/create-object.js';
import type { WorkflowRuntime } from '../workflow/index.js';
import { commandIdTime, newCommandId } from '../workflow/command-ledger.js';
import type { ClusterLayout } from './layout.js';
import { decodeCommands, decodeReplies, encodeCommands, encodeReplies, type ClusterCommand, type CommandReply } from './records.js';

/** Polls back off up to this many poll intervals (senders waiting for replies, owners of empty inboxes). */
export const MAX_BACKOFF_FACTOR = 8;

/** The most commands in one inbox object. */
const MAX_BATCH = 256;

/** Errors a command answers with instead of being retried: the caller's mistakes and the run's state. */
const ANSWERED_ERRORS: ReadonlySet<string> = new Set(['INVALID_ARGUMENT', 'INPUT_MISMATCH', 'CORRUPT_DATA']);

/** The runtimes of one owned shard that commands apply to. */
export interface ShardTargets {
  readonly runtime: WorkflowRuntime;
  /** The typed-jobs runtime, when the cluster has jobs. */
  readonly jobs: WorkflowRuntime | undefined;
}

async function apply(targets: ShardTargets, command: ClusterCommand): Promise<unknown> {
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
  }
}

function jobsOf(targets: ShardTargets): WorkflowRuntime {
  if (targets.jobs === undefined) throw new InvalidArgumentError('this cluster member runs no typed jobs (the jobs option); every member must pass the same jobs', { reason: 'unregistered_job' });
  return targets.jobs;
}

/**
 * Applies the inbox objects `keys` (from a listing of the shard's inbox, in key order) to the
 * shard's runtime. Resolves with the number of commands applied; rejects with store errors (the
 * object stays for the next pass).
 */
export async function applyInbox(store: ObjectStore, layout: ClusterLayout, shard: number, keys: readonly string[], targets: ShardTargets, signal: AbortSignal): Promise<number> {
  const prefix = layout.inboxPrefix(shard);
  let applied = 0;
  for (const key of keys) {
    if (signal.aborted) break;
    const id = key.slice(prefix.length);
    const replyKey = layout.replyKey(shard, id);
    if ((await store.get(replyKey)) === undefined) {
      const stored = await store.get(key);
      if (stored === undefined) continue; // another pass (a previous owner) finished it
      const commands = decodeCommands(stored.data, key);
      const replies: CommandReply[] = new Array(commands.length);
      // Commands on different runs or keys apply concurrently, so their commits share WAL puts;
      // those on one run or key apply in order.
      const byTarget = new Map<string, number[]>();
      commands.forEach((c, i) => {
        const target = c.type === 'signal' ? `key:${c.correlationKey}` : `run:${c.runId}`;
        byTarget.set(target, [...(byTarget.get(target) ?? []), i]);
      });
      await Promise.all(
        [...byTarget.values()].map(async (indexes) => {
          for (const i of indexes) {
            try {
              replies[i] = { ok: true, value: await apply(targets, commands[i]!) };
            } catch (e) {
              if (!isTaqubaError(e) || !ANSWERED_ERRORS.has(e.code)) throw e;
              replies[i] = { ok: false, code: e.code, message: e.message, details: { ...e.details } };
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

/**
 * Deletes the replies of `shard` whose batch was sent before `sentBeforeMs` (by the batch id's
 * time): their senders stopped waiting long ago (TIMEOUT, or the sender died), so nobody will
 * read or delete them. Resolves with how many went; rejects with store errors.
 */
export async function collectOrphanReplies(store: ObjectStore, layout: ClusterLayout, shard: number, sentBeforeMs: number): Promise<number> {
  const prefix = layout.repliesPrefix(shard);
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
    readonly details: { readonly shard: number; readonly batchId: string },
  ) {
    super(text);
  }

  forCommand(command: ClusterCommand): TaqubaError {
    const id = command.commandId;
    const retry = id === undefined ? '' : `; send it again with options.commandId=${id} to have it applied once`;
    return new TaqubaError(this.code, `${this.text}${retry}. shard=${this.details.shard} batch=${this.details.batchId}`, { details: { ...this.details, commandId: id } });
  }
}

interface Waiting {
  readonly command: ClusterCommand;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface CommandSenderOptions {
  readonly clock: Clock;
  readonly pollMs: number;
  readonly timeoutMs: number;
  /** Aborted when the member leaves: waiting commands reject with CLOSED. */
  readonly signal: AbortSignal;
}

export class CommandSender {
  private readonly waiting = new Map<number, Waiting[]>();
  private readonly sending = new Set<number>();

  constructor(
    private readonly store: ObjectStore,
    private readonly layout: ClusterLayout,
    private readonly options: CommandSenderOptions,
  ) {}

  /**
   * Sends `command` to the owner of `shard` and waits for its answer. Rejects with the typed error
   * the owner answered with, TIMEOUT after `timeoutMs` (the command may still apply later), CLOSED
   * when the member leaves first, or store errors.
   */
  send(shard: number, command: ClusterCommand): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(shard) ?? [];
      queue.push({ command, resolve, reject });
      this.waiting.set(shard, queue);
      if (!this.sending.has(shard)) void this.drain(shard);
    });
  }

  private async drain(shard: number): Promise<void> {
    this.sending.add(shard);
    try {
      for (;;) {
        const queue = this.waiting.get(shard) ?? [];
        if (queue.length === 0) return;
        const batch = queue.splice(0, MAX_BATCH);
        try {
          const replies = await this.sendBatch(shard, batch.map((w) => w.command));
          batch.forEach((w, i) => {
            const reply = replies[i];
            if (reply === undefined) w.reject(new TaqubaError('CORRUPT_DATA', `reply of shard ${shard} is missing an answer. index=${i}`, { details: { shard, index: i } }));
            else if (reply.ok) w.resolve(reply.value);
            else w.reject(new TaqubaError(reply.code as ErrorCode, reply.message, { details: reply.details as ErrorDetails }));
          });
        } catch (e) {
          for (const w of batch) w.reject(e instanceof UnansweredBatch ? e.forCommand(w.command) : e);
        }
      }
    } finally {
      this.sending.delete(shard);
    }
  }

  private async sendBatch(shard: number, commands: ClusterCommand[]): Promise<CommandReply[]> {
    const o = this.options;
    const id = newCommandId(o.clock);
    const replyKey = this.layout.replyKey(shard, id);
    await createObject(this.store, this.layout.inboxKey(shard, id), encodeCommands(commands));
    const deadline = o.clock.now() + o.timeoutMs;
    // The first polls come quickly (the owner applies within its inbox poll), later ones back
    // off, so waiting senders do not flood the store with GETs.
    let waitMs = o.pollMs;
    for (;;) {
      const stored = await this.store.get(replyKey);
      if (stored !== undefined) {
        const replies = decodeReplies(stored.data, replyKey);
        await this.store.delete(replyKey);
        return replies;
      }
      if (o.clock.now() >= deadline) {
        throw new UnansweredBatch('TIMEOUT', `no reply from the owner of shard ${shard} within ${o.timeoutMs} ms; the command may still apply`, { shard, batchId: id });
      }
      if (o.signal.aborted) throw new UnansweredBatch('CLOSED', `cluster member left while waiting for a reply from the owner of shard ${shard}; the command may still apply`, { shard, batchId: id });
      // No abort signal on the sleep: many waiting batches would each add a listener to it.
      await o.clock.sleep(waitMs);
      waitMs = Math.min(Math.round(waitMs * 1.5), o.pollMs * MAX_BACKOFF_FACTOR);
    }
  }
}
