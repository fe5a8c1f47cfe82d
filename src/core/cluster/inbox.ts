/**
 * Commands for a shard's owner, through the shard's inbox (RFC 0002 "Commands through the inbox").
 *
 * Sender: create `inbox/<id>` (create-only), poll `replies/<id>`, read it, delete it.
 * Owner: for each command in key order: a reply already there means it was applied before a
 * crash cut the delete short: delete the command. Else apply it to the runtime, create the reply,
 * delete the command. A store error leaves the command for the next pass.
 */
import { isTaqubaError, TaqubaError, type ErrorCode, type ErrorDetails } from '../errors.js';
import type { Clock } from '../clock.js';
import type { ObjectStore } from '../objects/object-store.js';
import { createObject } from '../objects/create-object.js';
import type { WorkflowRuntime } from '../workflow/index.js';
import type { ClusterLayout } from './layout.js';
import { decodeCommand, decodeReply, encodeCommand, encodeReply, type ClusterCommand, type CommandReply } from './records.js';

/** Errors a command answers with instead of being retried: the caller's mistakes and the run's state. */
const ANSWERED_ERRORS: ReadonlySet<string> = new Set(['INVALID_ARGUMENT', 'INPUT_MISMATCH', 'CORRUPT_DATA']);

async function apply(runtime: WorkflowRuntime, command: ClusterCommand): Promise<unknown> {
  switch (command.type) {
    case 'submit': {
      const { type: _type, ...spec } = command;
      return runtime.submit(spec);
    }
    case 'signal':
      return runtime.signal(command.correlationKey, command.payload);
    case 'cancel':
      return runtime.cancel(command.runId);
  }
}

/** One pass over the shard's inbox. Rejects with store errors (the command stays for the next pass). */
export async function applyInbox(store: ObjectStore, layout: ClusterLayout, shard: number, runtime: WorkflowRuntime, signal: AbortSignal): Promise<number> {
  const prefix = layout.inboxPrefix(shard);
  const keys: string[] = [];
  for await (const info of store.list(prefix)) keys.push(info.key);
  let applied = 0;
  for (const key of keys) {
    if (signal.aborted) break;
    const id = key.slice(prefix.length);
    const replyKey = layout.replyKey(shard, id);
    if ((await store.get(replyKey)) === undefined) {
      const stored = await store.get(key);
      if (stored === undefined) continue; // another pass (a previous owner) finished it
      let reply: CommandReply;
      try {
        reply = { ok: true, value: await apply(runtime, decodeCommand(stored.data, key)) };
      } catch (e) {
        if (!isTaqubaError(e) || !ANSWERED_ERRORS.has(e.code)) throw e;
        reply = { ok: false, code: e.code, message: e.message, details: { ...e.details } };
      }
      await createObject(store, replyKey, encodeReply(reply));
      applied++;
    }
    await store.delete(key);
  }
  return applied;
}

function randomId(clock: Clock): string {
  const bytes = new Uint8Array(10);
  crypto.getRandomValues(bytes);
  // Time first, so the owner applies commands about in the order they were sent.
  return `${clock.now().toString(36).padStart(9, '0')}-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * Sends `command` to the owner of `shard` and waits for the answer. Rejects with the typed error
 * the owner answered with, TIMEOUT after `timeoutMs` (the command may still apply later), CLOSED
 * when `signal` aborts, or store errors.
 */
export async function sendCommand(
  store: ObjectStore,
  layout: ClusterLayout,
  shard: number,
  command: ClusterCommand,
  options: { clock: Clock; pollMs: number; timeoutMs: number; signal: AbortSignal },
): Promise<unknown> {
  const id = randomId(options.clock);
  const inboxKey = layout.inboxKey(shard, id);
  const replyKey = layout.replyKey(shard, id);
  await createObject(store, inboxKey, encodeCommand(command));
  const deadline = options.clock.now() + options.timeoutMs;
  for (;;) {
    const stored = await store.get(replyKey);
    if (stored !== undefined) {
      const reply = decodeReply(stored.data, replyKey);
      await store.delete(replyKey);
      if (reply.ok) return reply.value;
      throw new TaqubaError(reply.code as ErrorCode, reply.message, { details: reply.details as ErrorDetails });
    }
    if (options.clock.now() >= deadline) {
      throw new TaqubaError('TIMEOUT', `no reply from the owner of shard ${shard} within ${options.timeoutMs} ms; the command may still apply. command=${command.type} id=${id}`, {
        details: { shard, command: command.type, commandId: id },
      });
    }
    if (options.signal.aborted) throw new TaqubaError('CLOSED', `cluster member closed while waiting for a reply. command=${command.type} id=${id}`, { details: { shard, commandId: id } });
    await options.clock.sleep(options.pollMs, options.signal).catch(() => undefined);
  }
}
