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
 */

/** One live lease. */
export interface LeaseEntry {
  readonly queue: string;
  readonly id: string;
  readonly token: number;
  expiresAt: number;
  reaping: boolean;
}

export type RenewResult = { readonly ok: true; readonly expiresAt: number } | { readonly ok: false };

function slot(queue: string, id: string): string {
  // Queue names cannot contain control characters, so NUL separates unambiguously.
  return `${queue}\u0000${id}`;
}

export class LeaseRegistry {
  private readonly entries = new Map<string, LeaseEntry>();

  /** Registers a claim; replaces any entry of the same job. */
  insert(queue: string, id: string, token: number, expiresAt: number): void {
    this.entries.set(slot(queue, id), { queue, id, token, expiresAt, reaping: false });
  }

  get(queue: string, id: string): LeaseEntry | undefined {
    return this.entries.get(slot(queue, id));
  }

  /** True when the registry holds exactly this claim token for the job. */
  holds(queue: string, id: string, token: number): boolean {
    return this.entries.get(slot(queue, id))?.token === token;
  }

  /**
   * Sets the expiry of a live, unmarked entry with this token. Refused (ok=false) for a wrong
   * token, a missing job, or an entry the reaper already marked.
   */
  renew(queue: string, id: string, token: number, expiresAt: number): RenewResult {
    const entry = this.entries.get(slot(queue, id));
    if (!entry || entry.token !== token || entry.reaping) return { ok: false };
    entry.expiresAt = expiresAt;
    return { ok: true, expiresAt };
  }

  /** Removes the entry only if it still carries `token`. Returns whether it did. */
  remove(queue: string, id: string, token: number): boolean {
    const key = slot(queue, id);
    if (this.entries.get(key)?.token !== token) return false;
    this.entries.delete(key);
    return true;
  }

  /**
   * Every entry with expiresAt ≤ now, soonest first, each marked as reaping and left in place.
   * Entries marked by an earlier tick whose reap failed are returned again.
   */
  takeDue(now: number): LeaseEntry[] {
    const due: LeaseEntry[] = [];
    for (const entry of this.entries.values()) {
      if (entry.expiresAt <= now) {
        entry.reaping = true;
        due.push(entry);
      }
    }
    due.sort((a, b) => a.expiresAt - b.expiresAt || a.token - b.token);
    return due;
  }

  /** The current expiry of this process's lease on the job, if it holds one. */
  expiry(queue: string, id: string): number | undefined {
    return this.entries.get(slot(queue, id))?.expiresAt;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Every live entry (a snapshot), for tests and tooling. */
  list(): LeaseEntry[] {
    return [...this.entries.values()].map((e) => ({ ...e }));
  }
}

/** Cancel signals of live deliveries, keyed by job id, fenced by claim token. */
export class CancelTokens {
  private readonly controllers = new Map<string, { token: number; controller: AbortController }>();

  /** Installs a fresh signal for a claim (replacing any older one); pre-fired when `fired`. */
  install(id: string, token: number, fired: boolean): AbortSignal {
    const controller = new AbortController();
    if (fired) controller.abort(cancelReason(id));
    this.controllers.set(id, { token, controller });
    return controller.signal;
  }

  /** Drops the signal of this claim (no-op if a newer claim replaced it). */
  clear(id: string, token: number): void {
    if (this.controllers.get(id)?.token === token) this.controllers.delete(id);
  }

  /** Fires the live signal of the job, if any. Returns whether one existed. */
  fire(id: string): boolean {
    const entry = this.controllers.get(id);
    if (!entry) return false;
    if (!entry.controller.signal.aborted) entry.controller.abort(cancelReason(id));
    return true;
  }

  /** Fires and forgets the job's signal (the job left the queue). */
  fireAndDrop(id: string): void {
    this.fire(id);
    this.controllers.delete(id);
  }
}

function cancelReason(id: string): Error {
  const e = new Error(`job cancel requested. id=${id}`);
  e.name = 'CancelRequested';
  return e;
}
