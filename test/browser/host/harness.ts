/**
 * Test harness for the browser host: starts test-app workers (pages/app-worker.ts) on a store,
 * connects clients, and collects what the workers report on their log channel and what the
 * clients receive as events.
 */
import { connect, type HostEvent, type WorkflowClient } from '../../../src/browser/index.js';
import type { LogEntry, Plan, WorkerConfig } from './pages/app-worker.js';

export type { LogEntry, Plan };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const planInput = (plan: Plan): Uint8Array => encoder.encode(JSON.stringify(plan));
export const text = (bytes: Uint8Array | null | undefined): string | null => (bytes == null ? null : decoder.decode(bytes));

/** A store (and log channel) name no other test uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Polls `probe` until it returns a value other than undefined/false. */
export async function waitFor<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Makes every commit the leader has made so far durable. Claims are non-durable commits (as in
 * the reference), so a step can be running while its claim is not yet stored; killing the worker
 * then would redeliver the step with no interruption counted. A buffered signal is a durable write and the
 * WAL stores commits in order, so once it is stored, so is everything before it.
 */
export async function durabilityBarrier(signal: (key: string) => Promise<string>): Promise<void> {
  const outcome = await signal(uniqueName('durability-barrier'));
  if (outcome !== 'buffered') throw new Error(`the barrier signal was ${outcome}, not buffered`);
}

/** Everything the workers of one store report on its log channel. */
export class TestLog {
  readonly entries: LogEntry[] = [];
  private readonly channel: BroadcastChannel;

  constructor(readonly name: string) {
    this.channel = new BroadcastChannel(name);
    this.channel.onmessage = (ev) => this.entries.push(ev.data as LogEntry);
  }

  of<T extends LogEntry['type']>(type: T, filter: (e: Extract<LogEntry, { type: T }>) => boolean = () => true): Extract<LogEntry, { type: T }>[] {
    return this.entries.filter((e): e is Extract<LogEntry, { type: T }> => e.type === type && filter(e as Extract<LogEntry, { type: T }>));
  }

  waitFor<T extends LogEntry['type']>(type: T, filter: (e: Extract<LogEntry, { type: T }>) => boolean = () => true, timeoutMs?: number): Promise<Extract<LogEntry, { type: T }>> {
    return waitFor(() => this.of(type, filter)[0], `log entry ${type}`, timeoutMs);
  }

  close(): void {
    this.channel.close();
  }
}

/** One test-app worker with its client and the events the client received. */
export interface TestHost {
  readonly hostId: string;
  readonly worker: Worker;
  readonly client: WorkflowClient;
  readonly events: HostEvent[];
  /** Resolves with the first received event matching `filter`. */
  event<T extends HostEvent['type']>(type: T, filter?: (e: Extract<HostEvent, { type: T }>) => boolean, timeoutMs?: number): Promise<Extract<HostEvent, { type: T }>>;
  /** Resolves once this host's role is `role`. */
  role(role: string, timeoutMs?: number): Promise<void>;
}

let hosts = 0;

/** Starts a test-app worker on store `name` and connects to it. */
export function startHost(store: WorkerConfig['store'], name: string, log: string, hostId = `h${++hosts}`): TestHost {
  const config: WorkerConfig = { store, name, hostId, log };
  const worker = new Worker(new URL('./pages/app-worker.ts', import.meta.url), { type: 'module', name: JSON.stringify(config) });
  const client = connect(worker, { persist: false });
  const events: HostEvent[] = [];
  client.subscribe((e) => events.push(e));
  return {
    hostId,
    worker,
    client,
    events,
    event(type, filter = () => true, timeoutMs) {
      return waitFor(() => events.find((e) => e.type === type && filter(e as never)) as never, `event ${type} on ${hostId}`, timeoutMs);
    },
    async role(role, timeoutMs) {
      await waitFor(async () => (await client.info()).role === role, `${hostId} to be ${role}`, timeoutMs);
    },
  };
}
