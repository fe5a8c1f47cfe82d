/**
 * What the store's writer knows of its concurrency keys without reading them back: each key's slot
 * state (or that it has none) and the waiting entries it wrote, exactly as committed. A keyed run
 * otherwise reads and decodes its key's state at submission and at its ending, and its waiting
 * entry at admission: with most runs of a key waiting, those reads were a quarter of the extra CPU
 * a keyed run costs over a plain one (docs/performance.md).
 *
 * Sound because of how flow state changes: only under the key's lock (flow-locks.ts), on the
 * `Queue` handle that is the store's one writer, and committed before the lock is released. A
 * value is noted only from a read of the store under the lock, or by the commit that wrote it
 * (`SettlementEffects.onCommitted`, which runs only when the effects were applied); a change whose
 * outcome the code does not learn that way forgets the key first. What is not known is read from
 * the store, so forgetting is always safe, and both maps are bounded (oldest forgotten first).
 * A failed commit leaves the store as it was, or fails the engine (the handle is then unusable;
 * a reopened store gets a new handle and an empty cache).
 */
import { perHandle } from '../handle-state.js';
import type { QueuedRun, SlotState } from './flow-records.js';

/** Keys whose slot state is remembered (a few hundred KB at most). */
const MAX_SLOT_STATES = 10_000;
/** Waiting entries remembered, and the input bytes they may hold in all. */
const MAX_WAITING = 10_000;
const MAX_WAITING_INPUT_BYTES = 8 * 1024 * 1024;

export class FlowCache {
  /** By `queueName\0key`: the state, or null when the key has none. */
  private readonly slots = new Map<string, SlotState | null>();
  /** By `queueName\0key`, then place in the key's list. */
  private readonly waiting = new Map<string, Map<number, QueuedRun>>();
  private waitingCount = 0;
  private waitingBytes = 0;

  /** The key's state as committed: a state, null for none, undefined when not known. */
  slotState(queueName: string, key: string): SlotState | null | undefined {
    return this.slots.get(slotId(queueName, key));
  }

  noteSlotState(queueName: string, key: string, state: SlotState | null): void {
    const id = slotId(queueName, key);
    this.slots.delete(id); // re-inserted last: the oldest noted is forgotten first
    this.slots.set(id, state);
    if (this.slots.size > MAX_SLOT_STATES) this.slots.delete(this.slots.keys().next().value!);
    // A key without state has no waiting runs, and its next list starts again at place 0.
    if (state === null) this.forgetKey(id);
  }

  forgetSlotState(queueName: string, key: string): void {
    this.slots.delete(slotId(queueName, key));
  }

  /** The waiting entry at `seq` of `key`, if remembered; it is forgotten as it is taken. */
  takeWaiting(queueName: string, key: string, seq: number): QueuedRun | undefined {
    const id = slotId(queueName, key);
    const runs = this.waiting.get(id);
    const run = runs?.get(seq);
    if (run === undefined) return undefined;
    runs!.delete(seq);
    if (runs!.size === 0) this.waiting.delete(id);
    this.waitingCount--;
    this.waitingBytes -= run.input!.length;
    return run;
  }

  /** Remembers a committed waiting entry whose input is inline, while within the bounds. */
  noteWaiting(queueName: string, key: string, seq: number, run: QueuedRun): void {
    const bytes = run.input?.length;
    if (bytes === undefined || this.waitingCount >= MAX_WAITING || this.waitingBytes + bytes > MAX_WAITING_INPUT_BYTES) return;
    this.forgetWaiting(queueName, key, seq);
    const id = slotId(queueName, key);
    let runs = this.waiting.get(id);
    if (runs === undefined) this.waiting.set(id, (runs = new Map()));
    runs.set(seq, run);
    this.waitingCount++;
    this.waitingBytes += bytes;
  }

  forgetWaiting(queueName: string, key: string, seq: number): void {
    this.takeWaiting(queueName, key, seq);
  }

  /** @internal What is remembered (tests audit it against the store). */
  remembered(): {
    slots: { queueName: string; key: string; state: SlotState | null }[];
    waiting: { queueName: string; key: string; seq: number; run: QueuedRun }[];
  } {
    const split = (id: string): { queueName: string; key: string } => {
      const at = id.indexOf('\u0000');
      return { queueName: id.slice(0, at), key: id.slice(at + 1) };
    };
    return {
      slots: [...this.slots].map(([id, state]) => ({ ...split(id), state })),
      waiting: [...this.waiting].flatMap(([id, runs]) => [...runs].map(([seq, run]) => ({ ...split(id), seq, run }))),
    };
  }

  /** Drops every remembered entry of the key `id`. */
  private forgetKey(id: string): void {
    const runs = this.waiting.get(id);
    if (runs === undefined) return;
    this.waiting.delete(id);
    this.waitingCount -= runs.size;
    for (const run of runs.values()) this.waitingBytes -= run.input!.length;
  }
}

const slotId = (queueName: string, key: string): string => `${queueName}\u0000${key}`;

/** The flow cache of a queue handle (shared by every runtime on it, as its flow locks are). */
export const flowCache = perHandle(() => new FlowCache());
