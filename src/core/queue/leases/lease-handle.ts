/**
 * What a worker-loop handler gets instead of the claim: it can extend the lease and observe
 * cancellation, but never settle.
 */
import type { Clock } from '../../clock.js';
import { ClaimLostError, TaqubaError } from '../../errors.js';
import { SETTLEMENT_MARGIN_MS } from '../constants.js';
import type { CancelState, LeaseRegistry } from './lease-registry.js';
import { validateDuration } from '../records/validation.js';

/** What a bound handle needs to reach its lease (no entry point exports it). */
export interface LeaseBinding {
  readonly registry: LeaseRegistry;
  readonly clock: Clock;
  readonly queue: string;
  readonly id: string;
  readonly token: number;
  /** The delivery's cancel state (its signal is created lazily). */
  readonly cancel: CancelState;
}

const NEVER = new AbortController().signal;

function cancelRequestedError(queue: string, id: string): TaqubaError {
  return new TaqubaError('CANCELLED', `lease renewal refused: job cancel requested. queue=${queue} id=${id}`, { details: { queue, id } });
}

export function claimLostError(queue: string, id: string, reason: string): ClaimLostError {
  return new ClaimLostError(`claim lost. queue=${queue} id=${id} reason=${reason}`, { queue, id, reason });
}

/** Renews the lease of one claim. Shared by `Queue.renewLease` and `LeaseHandle`. */
export function renewBinding(b: LeaseBinding, expiresAt: number): number {
  if (b.cancel.fired) throw cancelRequestedError(b.queue, b.id);
  const result = b.registry.renew(b.queue, b.id, b.token, expiresAt);
  if (!result.ok) throw claimLostError(b.queue, b.id, 'lease no longer held');
  return result.expiresAt;
}

export class LeaseHandle {
  private constructor(private readonly binding: LeaseBinding | undefined) {}

  /** @internal */
  static bind(binding: LeaseBinding): LeaseHandle {
    return new LeaseHandle(binding);
  }

  /** A handle bound to nothing: every call succeeds. For unit-testing handlers. */
  static detached(): LeaseHandle {
    return new LeaseHandle(undefined);
  }

  /** Fires when a cancel of this job is requested. */
  get signal(): AbortSignal {
    return this.binding?.cancel.signal ?? NEVER;
  }

  /** The lease expiry in epoch ms, or undefined when the lease is gone (or detached). */
  get expiresAt(): number | undefined {
    const b = this.binding;
    if (!b) return undefined;
    const entry = b.registry.get(b.queue, b.id);
    return entry?.token === b.token ? entry.expiresAt : undefined;
  }

  /**
   * Makes sure at least `remainingMs` (plus a 5 s settlement margin) is left on the lease; never
   * shortens it. Returns the expiry in force.
   *
   * Throws CANCELLED once a cancel was requested (nothing changes), CLAIM_LOST when the lease is
   * gone or superseded, INVALID_ARGUMENT for a negative or non-finite duration.
   */
  ensureAtLeast(remainingMs: number): number {
    validateDuration(remainingMs, 'remainingMs');
    const b = this.binding;
    if (!b) return Number.POSITIVE_INFINITY;
    if (b.cancel.fired) throw cancelRequestedError(b.queue, b.id);
    const entry = b.registry.get(b.queue, b.id);
    if (!entry || entry.token !== b.token) throw claimLostError(b.queue, b.id, 'lease no longer held');
    const needed = b.clock.now() + remainingMs + SETTLEMENT_MARGIN_MS;
    if (entry.expiresAt >= needed) return entry.expiresAt;
    return renewBinding(b, needed);
  }

  /**
   * Sets the lease to expire `extensionMs` from now (may shorten it). Returns the new expiry.
   * Throws CANCELLED, CLAIM_LOST or INVALID_ARGUMENT as `ensureAtLeast` does.
   */
  renew(extensionMs: number): number {
    validateDuration(extensionMs, 'extensionMs');
    const b = this.binding;
    if (!b) return Number.POSITIVE_INFINITY;
    return renewBinding(b, b.clock.now() + extensionMs);
  }
}
