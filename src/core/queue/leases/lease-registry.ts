/**
 * In-memory leases. The store only records "this job is claimed"; the expiry and the claim token
 * that tells deliveries apart live here, so a restart treats every claimed record as orphaned.
 *
 * Protocol rules the callers keep:
 * 1. A claim inserts its entry before its commit (a failed commit leaves an entry that the reaper
 *    drops because no claimed record exists; a missing entry would hide the claim from the reaper).
 * 2. A settlement removes the entry after its commit, fenced by token, so a late removal can never
 *    delete a newer claim's entry.
 * 3. The reaper marks due entries; a marked entry refuses renewal but stays until removed.
 * 4. A claim the queue gives up on without a settlement (it could not deliver it) is marked
 *    abandoned and made due: the reaper ends it as an interruption, not a failed try.
 */

/** One live lease. */
export interface LeaseEntry {
  readonly queue: string;
  readonly id: string;
  readonly token: number;
  expiresAt: number;
  reaping: boolean;
  /** Its holder gave it up without a settlement: the reaper ends it as an interruption. */
  abandoned: boolean;
}

export type RenewResult = { readonly ok: true; readonly expiresAt: number } | { readonly ok: false };

export class LeaseRegistry {
  /** queue → id → entry: no composite string key to build and hash per call. */
  private readonly byQueue = new Map<string, Map<string, LeaseEntry>>();
  private count = 0;

  /** Registers a claim; replaces any entry of the same job. */
  insert(queue: string, id: string, token: number, expiresAt: number): void {
    let entries = this.byQueue.get(queue);
    if (entries === undefined) {
      entries = new Map();
      this.byQueue.set(queue, entries);
    }
    const before = entries.size;
    entries.set(id, { queue, id, token, expiresAt, reaping: false, abandoned: false });
    this.count += entries.size - before;
  }

  get(queue: string, id: string): LeaseEntry | undefined {
    return this.byQueue.get(queue)?.get(id);
  }

  /** True when the registry holds exactly this claim token for the job. */
  holds(queue: string, id: string, token: number): boolean {
    return this.byQueue.get(queue)?.get(id)?.token === token;
  }

  /**
   * Sets the expiry of a live, unmarked entry with this token. Refused (ok=false) for a wrong
   * token, a missing job, or an entry the reaper already marked.
   */
  renew(queue: string, id: string, token: number, expiresAt: number): RenewResult {
    const entry = this.get(queue, id);
    if (!entry || entry.token !== token || entry.reaping) return { ok: false };
    entry.expiresAt = expiresAt;
    return { ok: true, expiresAt };
  }

  /**
   * Marks this claim abandoned and due at `now` (only if the entry still carries `token`), so the
   * next reaper tick ends it as an interruption. Returns whether it did.
   */
  abandon(queue: string, id: string, token: number, now: number): boolean {
    const entry = this.get(queue, id);
    if (!entry || entry.token !== token) return false;
    entry.abandoned = true;
    entry.expiresAt = Math.min(entry.expiresAt, now);
    return true;
  }

  /**
   * Moves the job's lease from `fromToken` to a fresh entry for `toToken` (a claim continued in
   * place). Returns the replaced entry, or undefined (nothing changed) when `fromToken` is not held.
   */
  swap(queue: string, id: string, fromToken: number, toToken: number, expiresAt: number): LeaseEntry | undefined {
    const entries = this.byQueue.get(queue);
    const previous = entries?.get(id);
    if (entries === undefined || previous?.token !== fromToken) return undefined;
    entries.set(id, { queue, id, token: toToken, expiresAt, reaping: false, abandoned: false });
    return previous;
  }

  /** Puts `previous` back in place of the entry carrying `token` (a swap whose commit did not happen); no-op otherwise. */
  reinstate(previous: LeaseEntry, token: number): void {
    const entries = this.byQueue.get(previous.queue);
    if (entries?.get(previous.id)?.token === token) entries.set(previous.id, previous);
  }

  /** Removes the entry only if it still carries `token`. Returns whether it did. */
  remove(queue: string, id: string, token: number): boolean {
    const entries = this.byQueue.get(queue);
    if (entries?.get(id)?.token !== token) return false;
    entries.delete(id);
    this.count--;
    return true;
  }

  /**
   * Every entry with expiresAt ≤ now, soonest first, each marked as reaping and left in place.
   * Entries marked by an earlier tick whose reap failed are returned again.
   */
  takeDue(now: number): LeaseEntry[] {
    const due: LeaseEntry[] = [];
    for (const entries of this.byQueue.values()) {
      for (const entry of entries.values()) {
        if (entry.expiresAt <= now) {
          entry.reaping = true;
          due.push(entry);
        }
      }
    }
    due.sort((a, b) => a.expiresAt - b.expiresAt || a.token - b.token);
    return due;
  }

  /** The current expiry of this process's lease on the job, if it holds one. */
  expiry(queue: string, id: string): number | undefined {
    return this.get(queue, id)?.expiresAt;
  }

  get size(): number {
    return this.count;
  }

  /** Every live entry (a snapshot), for tests and tooling. */
  list(): LeaseEntry[] {
    const out: LeaseEntry[] = [];
    for (const entries of this.byQueue.values()) for (const e of entries.values()) out.push({ ...e });
    return out;
  }
}

/**
 * The cancel state of one delivery. Its AbortSignal is created on first use (most deliveries
 * never look at it); a signal created after a cancel request starts aborted.
 */
export class CancelState {
  private controller: AbortController | undefined;
  private firedFlag: boolean;

  constructor(
    readonly id: string,
    readonly token: number,
    fired: boolean,
  ) {
    this.firedFlag = fired;
  }

  /** True once a cancel of this delivery's job was requested. */
  get fired(): boolean {
    return this.firedFlag;
  }

  get signal(): AbortSignal {
    let c = this.controller;
    if (c === undefined) {
      c = new AbortController();
      if (this.firedFlag) c.abort(cancelReason(this.id));
      this.controller = c;
    }
    return c.signal;
  }

  fire(): void {
    if (this.firedFlag) return;
    this.firedFlag = true;
    this.controller?.abort(cancelReason(this.id));
  }
}

/** Cancel states of live deliveries, keyed by job id, fenced by claim token. */
export class CancelTokens {
  private readonly states = new Map<string, CancelState>();

  /** Installs a fresh state for a claim (replacing any older one); pre-fired when `fired`. */
  install(id: string, token: number, fired: boolean): CancelState {
    const state = new CancelState(id, token, fired);
    this.states.set(id, state);
    return state;
  }

  /** Puts `previous` back in place of the state of claim `token` (a continuation that did not commit); no-op otherwise. */
  reinstate(previous: CancelState, token: number): void {
    if (this.states.get(previous.id)?.token === token) this.states.set(previous.id, previous);
  }

  /** Drops the state of this claim (no-op if a newer claim replaced it). */
  clear(id: string, token: number): void {
    if (this.states.get(id)?.token === token) this.states.delete(id);
  }

  /** Fires the live signal of the job, if any. Returns whether one existed. */
  fire(id: string): boolean {
    const state = this.states.get(id);
    if (!state) return false;
    state.fire();
    return true;
  }

  /** Fires and forgets the job's signal (the job left the queue). */
  fireAndDrop(id: string): void {
    this.fire(id);
    this.states.delete(id);
  }
}

function cancelReason(id: string): Error {
  const e = new Error(`job cancel requested. id=${id}`);
  e.name = 'CancelRequested';
  return e;
}
