/**
 * Cluster members as real child processes (cluster-member.ts), their output parsed, and the
 * final check of a cluster's shards: exactly one committed effect per step and per run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { fromUtf8, utf8 } from '../../src/core/bytes.js';
import { ClusterLayout } from '../../src/core/cluster/layout.js';
import type { ObjectStore } from '../../src/core/objects/object-store.js';
import { QueueReader } from '../../src/core/queue/index.js';
import type { Config } from './cluster-member.js';
import { nodeScript } from '../support/node-script.js';

const memberScript = fileURLToPath(new URL('./cluster-member.ts', import.meta.url));
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class MemberProc {
  readonly child: ChildProcess;
  owned: number[] = [];
  readonly terms: string[] = [];
  readonly warnings: string[] = [];
  submitted = 0;
  /** Runs whose submission through this member was answered (`accepted <runId>` lines). */
  readonly accepted: string[] = [];
  /** `ran <shard>` lines (with `report`): steps run per shard, and when the first one of each came. */
  readonly ran = new Map<number, number>();
  /** Steps after a run's first that this member ran (so that run had a step committed). */
  ranLaterSteps = 0;
  readonly firstRanAt = new Map<number, number>();
  walPuts: Record<string, number> | undefined;
  /** The member's lease renewal figures (Cluster.renewalStats), as last printed. */
  renewal: { renewals: number; maxGapMs: number; maxRoundTripMs: number; maxTickLagMs: number } | undefined;
  opened = false;
  output = '';
  readonly exited: Promise<void>;

  constructor(readonly config: Config) {
    this.child = spawn(process.execPath, [...nodeScript(memberScript), JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.exited = new Promise((r) => this.child.once('exit', () => r()));
    let buffer = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) this.onLine(line);
    });
    this.child.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
  }

  get id(): string {
    return this.config.memberId;
  }

  private onLine(line: string): void {
    if (line === 'open') this.opened = true;
    else if (line.startsWith('owned ')) this.owned = line.slice(6) === '' ? [] : line.slice(6).split(',').map(Number);
    else if (line.startsWith('term ')) this.terms.push(line.slice(5));
    else if (line.startsWith('submitted ')) this.submitted += Number(line.slice(10));
    else if (line.startsWith('accepted ')) this.accepted.push(line.slice(9));
    else if (line.startsWith('warn ')) this.warnings.push(line.slice(5));
    else if (line.startsWith('ran ')) {
      const [shard, step] = line.slice(4).split(' ').map(Number) as [number, number];
      this.ran.set(shard, (this.ran.get(shard) ?? 0) + 1);
      if (step > 0) this.ranLaterSteps++;
      if (!this.firstRanAt.has(shard)) this.firstRanAt.set(shard, Date.now());
    } else if (line.startsWith('walputs ')) this.walPuts = JSON.parse(line.slice(8)) as Record<string, number>;
    else if (line.startsWith('renewal ')) this.renewal = JSON.parse(line.slice(8)) as MemberProc['renewal'];
    else this.output += `${line}\n`;
  }

  send(line: string): void {
    this.child.stdin!.write(`${line}\n`);
  }
}

/** What a member did, for a failure message: its shards, runs ended, lease renewal figures, last warnings and output. */
export function describeMembers(members: readonly MemberProc[]): string {
  return members.map((m) => `${m.id}: owned=${m.owned.join(',')} terms=${m.terms.length} renewal=${JSON.stringify(m.renewal)} warnings=${m.warnings.slice(-3).join(' | ')} out=${m.output.slice(-300)}`).join('\n');
}

export async function waitUntil(what: string, cond: () => boolean | Promise<boolean>, ms: number, members: readonly MemberProc[] = []): Promise<number> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms: ${what}\n${describeMembers(members)}`);
    await sleep(25);
  }
  return Date.now() - start;
}

/**
 * Waits for `cond` as long as `progress` keeps moving: fails only when it stood still for
 * `stallMs`. For work whose pace depends on the machine's load (runs through a CPU-bound S3
 * test server), where a fixed deadline would measure the machine rather than the product.
 */
export async function waitWhileProgressing(what: string, cond: () => boolean, progress: () => number, stallMs: number, members: readonly MemberProc[] = []): Promise<number> {
  const start = Date.now();
  let last = progress();
  let movedAt = start;
  while (!cond()) {
    const now = Date.now();
    const current = progress();
    if (current !== last) {
      last = current;
      movedAt = now;
    } else if (now - movedAt > stallMs) {
      throw new Error(`no progress for ${stallMs} ms (at ${current}, after ${now - start} ms): ${what}\n${describeMembers(members)}`);
    }
    await sleep(25);
  }
  return Date.now() - start;
}

/** Every shard owned by exactly one of `members`, each with floor or ceil of its share. */
export function fairlyOwned(members: readonly MemberProc[], shards: number): boolean {
  const all = members.flatMap((m) => m.owned).sort((a, b) => a - b);
  const lo = Math.floor(shards / members.length);
  return all.length === shards && all.every((s, i) => s === i) && members.every((m) => m.owned.length === lo || m.owned.length === lo + 1);
}

/** The `step/` and `term/` effect keys of every shard, read through read-only readers. */
export async function committedEffects(store: ObjectStore, shards: number): Promise<{ steps: Map<string, string[]>; terms: Map<string, string[]> }> {
  const layout = new ClusterLayout('cl');
  const steps = new Map<string, string[]>();
  const terms = new Map<string, string[]>();
  await Promise.all(
    Array.from({ length: shards }, async (_, s) => {
      let reader: QueueReader;
      try {
        reader = await QueueReader.open(store, layout.queuePath(s), { pollIntervalMs: null, logger: false });
      } catch {
        return; // a shard no run went to
      }
      try {
        for (const [prefix, into] of [['step/', steps], ['term/', terms]] as const) {
          let cursor: Uint8Array | undefined;
          do {
            const page = await reader.kvScan(utf8(prefix), { limit: 1000, cursor });
            for (const [key, value] of page.entries) {
              const parts = fromUtf8(key).split('/');
              const id = prefix === 'step/' ? `${parts[1]}/${parts[2]}` : parts[1]!;
              const list = into.get(id) ?? [];
              list.push(`${parts[parts.length - 1]}@${fromUtf8(value)}`);
              into.set(id, list);
            }
            cursor = page.nextCursor;
          } while (cursor);
        }
      } finally {
        await reader.close();
      }
    }),
  );
  return { steps, terms };
}

/** The member id of a committed effect's entry (`<member>-<n>@<time>`). */
export function effectMember(entry: string): string {
  return entry.slice(0, entry.lastIndexOf('-', entry.indexOf('@')));
}

export function effectTime(entry: string): number {
  return Number(entry.slice(entry.indexOf('@') + 1));
}
