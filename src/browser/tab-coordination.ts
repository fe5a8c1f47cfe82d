/**
 * One executor across tabs. Every tab's worker host joins the store's BroadcastChannel; the host
 * holding the store's Web Lock (see WorkflowHost) runs the runtime and serves the others.
 *
 * Routing protocol (messages in protocol.ts, `TabMessage`):
 * 1. On start a host posts `hello`; the leader answers `leader`. A leader also announces itself
 *    (`leader`) as soon as its runtime is open, so every host learns of a takeover unasked.
 * 2. A call on a host that leads runs locally. Otherwise it is posted as a `request` addressed to
 *    the known leader, or held until one is known (re-posting `hello` every second meanwhile).
 * 3. The leader runs the request and posts the `response` to its sender.
 * 4. A leader that stops gracefully posts `resign` after its in-flight requests are answered.
 *    A leader that dies (tab closed, crashed, worker terminated) posts nothing; its lock is
 *    released by the browser and the next host's `leader` announcement is the signal.
 * 5. When a different leader appears, requests sent to the previous one and still unanswered are
 *    sent again when their operation may be (`isResendable`, core operation-list.ts): reads,
 *    the commands that carry a command id (the runtime keeps each one's answer with its effect,
 *    so a write the old leader applied answers from that record) and the harmless writes.
 *    `jobSubmit` is rejected with STORE_UNAVAILABLE (`details.reason` `leader_changed`): it may
 *    or may not have been applied.
 * 6. The leader broadcasts every run event as an `event`; each host delivers it to its page.
 */
import { ClosedError, StoreUnavailableError } from '../core/errors.js';
import { applyOperation, isResendable } from '../core/operations/operation-list.js';
import {
  PROTOCOL_VERSION,
  type CallResult,
  type OperationCall,
  type RunEvent,
  type BatchProgressEvent,
  type RuntimeOperations,
  type TabEnvelope,
  type TabMessage,
} from './protocol.js';
import { fromWireError, toWireError } from './wire-error.js';

/** How often a host that waits for a leader asks again. */
const HELLO_INTERVAL_MS = 1000;

export interface TabCoordinatorOptions {
  /** The BroadcastChannel shared by every host of one store. */
  readonly channelName: string;
  readonly hostId: string;
  /** The leader became known, changed, or went away (null). Not called for this host's own leadership. */
  readonly onLeaderChange: (leader: string | null) => void;
  /** A run event broadcast by the leader. */
  readonly onEvent: (event: RunEvent | BatchProgressEvent) => void;
}

interface PendingCall {
  readonly id: string;
  readonly call: OperationCall;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** The leader the request was posted to; null while waiting for one. */
  sentTo: string | null;
}

function leaderChanged(method: string): StoreUnavailableError {
  return new StoreUnavailableError(`the leader tab went away before answering; the call may or may not have taken effect. method=${method}`, {
    reason: 'leader_changed',
    method,
  });
}

export class TabCoordinator {
  private channel: BroadcastChannel | undefined;
  private leaderId: string | null = null;
  private local: RuntimeOperations | undefined;
  private readonly pending = new Map<string, PendingCall>();
  private readonly serving = new Set<Promise<void>>();
  private helloTimer: ReturnType<typeof setInterval> | undefined;
  private nextId = 0;
  private closed = false;

  constructor(private readonly options: TabCoordinatorOptions) {}

  /** The leader this host knows of (itself while it leads), or null. */
  get leader(): string | null {
    return this.leaderId;
  }

  get isLeading(): boolean {
    return this.local !== undefined;
  }

  /** Joins the channel and asks who leads. */
  start(): void {
    if (this.channel || this.closed) return;
    this.channel = new BroadcastChannel(this.options.channelName);
    this.channel.onmessage = (ev: MessageEvent) => this.receive(ev.data as TabEnvelope);
    this.post({ type: 'hello', from: this.options.hostId });
  }

  /**
   * Runs `call` on the leader: here when this host leads, else on the leader's host. Rejects
   * with the operation's own errors, CLOSED after `close`, or STORE_UNAVAILABLE (reason
   * `leader_changed`) for a non-retryable call whose leader went away unanswered.
   */
  call(call: OperationCall): Promise<unknown> {
    if (this.closed) return Promise.reject(new ClosedError('the workflow host is closed', { reason: 'closed' }));
    if (this.local) return applyOperation(this.local, call);
    return new Promise((resolve, reject) => {
      const entry: PendingCall = { id: `${this.options.hostId}:${++this.nextId}`, call, resolve, reject, sentTo: null };
      this.pending.set(entry.id, entry);
      if (this.leaderId !== null) this.send(entry, this.leaderId);
      else this.startHello();
    });
  }

  /** Rejects every call that waits for a leader (none is known) with `error`. */
  rejectUnrouted(error: unknown): void {
    for (const entry of [...this.pending.values()]) {
      if (entry.sentTo !== null) continue;
      this.pending.delete(entry.id);
      entry.reject(error);
    }
  }

  /** Number of calls waiting for a leader or its answer. */
  get pendingCalls(): number {
    return this.pending.size;
  }

  /**
   * This host now leads: serve requests with `ops`, announce it, and run the calls that were
   * waiting (step 5 for those sent to the previous leader).
   */
  lead(ops: RuntimeOperations): void {
    if (this.closed) return;
    this.local = ops;
    this.leaderId = this.options.hostId;
    this.stopHello();
    this.post({ type: 'leader', from: this.options.hostId });
    for (const entry of [...this.pending.values()]) {
      this.pending.delete(entry.id);
      if (entry.sentTo !== null && !isResendable(entry.call.method)) {
        entry.reject(leaderChanged(entry.call.method));
        continue;
      }
      applyOperation(ops, entry.call).then(entry.resolve, entry.reject);
    }
  }

  /**
   * Stops serving: waits for the requests in flight to be answered, then posts `resign`. Calls
   * made meanwhile wait for the next leader. Resolves once resigned.
   */
  async resign(): Promise<void> {
    if (!this.local) return;
    this.local = undefined;
    if (this.leaderId === this.options.hostId) this.leaderId = null;
    await Promise.allSettled([...this.serving]);
    this.post({ type: 'resign', from: this.options.hostId });
  }

  /** Leader only: sends a run event to every other host. */
  publish(event: RunEvent | BatchProgressEvent): void {
    if (this.local) this.post({ type: 'event', from: this.options.hostId, event });
  }

  /** Leaves the channel; calls still waiting reject with CLOSED. Call `resign` first when leading. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopHello();
    this.channel?.close();
    this.channel = undefined;
    const error = new ClosedError('the workflow host is closed', { reason: 'closed' });
    for (const entry of this.pending.values()) entry.reject(error);
    this.pending.clear();
  }

  private post(message: TabMessage): void {
    if (!this.channel) return;
    const envelope: TabEnvelope = { v: PROTOCOL_VERSION, message };
    this.channel.postMessage(envelope);
  }

  private send(entry: PendingCall, to: string): void {
    entry.sentTo = to;
    this.post({ type: 'request', from: this.options.hostId, to, id: entry.id, call: entry.call });
  }

  private startHello(): void {
    if (this.helloTimer !== undefined) return;
    this.post({ type: 'hello', from: this.options.hostId });
    this.helloTimer = setInterval(() => {
      if (this.leaderId !== null || this.pending.size === 0) return this.stopHello();
      this.post({ type: 'hello', from: this.options.hostId });
    }, HELLO_INTERVAL_MS);
  }

  private stopHello(): void {
    if (this.helloTimer === undefined) return;
    clearInterval(this.helloTimer);
    this.helloTimer = undefined;
  }

  private receive(envelope: TabEnvelope): void {
    if (envelope?.v !== PROTOCOL_VERSION || typeof envelope.message !== 'object' || envelope.message === null) return;
    const message = envelope.message;
    const self = this.options.hostId;
    if (message.from === self) return;
    switch (message.type) {
      case 'hello':
        if (this.local) this.post({ type: 'leader', from: self });
        return;
      case 'leader':
        // A host that leads ignores other claims: only one host can hold the lock at a time, so
        // this is a stale announcement from a leader that is already gone.
        if (!this.local) this.followLeader(message.from);
        return;
      case 'resign':
        if (this.leaderId === message.from) {
          this.leaderId = null;
          this.options.onLeaderChange(null);
          if (this.pending.size > 0) this.startHello();
        }
        return;
      case 'request':
        if (message.to === self) this.serve(message.from, message.id, message.call);
        return;
      case 'response':
        if (message.to === self) this.settle(message.id, message.result);
        return;
      case 'event':
        this.options.onEvent(message.event);
        return;
    }
  }

  /** Step 5: a leader (maybe a new one) is known; route every waiting or orphaned call to it. */
  private followLeader(leader: string): void {
    const changed = this.leaderId !== leader;
    this.leaderId = leader;
    this.stopHello();
    for (const entry of [...this.pending.values()]) {
      if (entry.sentTo === leader) continue;
      if (entry.sentTo !== null && !isResendable(entry.call.method)) {
        this.pending.delete(entry.id);
        entry.reject(leaderChanged(entry.call.method));
        continue;
      }
      this.send(entry, leader);
    }
    if (changed) this.options.onLeaderChange(leader);
  }

  private serve(from: string, id: string, call: OperationCall): void {
    const ops = this.local;
    if (!ops) return; // Resigned: the sender re-routes when the next leader announces itself.
    const done = applyOperation(ops, call)
      .then(
        (value): CallResult => ({ ok: true, value }),
        (error: unknown): CallResult => ({ ok: false, error: toWireError(error) }),
      )
      .then((result) => {
        try {
          this.post({ type: 'response', from: this.options.hostId, to: from, id, result });
        } catch (e) {
          // The value did not survive the structured clone: answer with the reason instead.
          this.post({ type: 'response', from: this.options.hostId, to: from, id, result: { ok: false, error: toWireError(e) } });
        }
      })
      .finally(() => this.serving.delete(done));
    this.serving.add(done);
  }

  private settle(id: string, result: CallResult): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    if (result.ok) entry.resolve(result.value);
    else entry.reject(fromWireError(result.error));
  }
}
