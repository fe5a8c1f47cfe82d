/**
 * A KV reader (KvDb.openReader) refreshing while writers run. Each refresh is followed by a full
 * scan; the states seen are judged at the end of the run, once every commit's outcome is known:
 * each must be some prefix of every writer's history, holding everything acknowledged before the
 * refresh began.
 */
import { fromUtf8 } from '../../src/core/bytes.js';
import { KvDb, type KvReader } from '../../src/core/kv/index.js';
import { Actor, EXPECTED } from './actor.js';
import type { SimContext } from './context.js';
import { PATH } from './context.js';

export class ReaderActor extends Actor {
  reader: KvReader | undefined;
  busy = false;
  /** States seen, to check at the end once every outcome is known. */
  readonly observations: { state: Map<string, string>; required: Set<number>; issued: Map<number, number>; step: number }[] = [];

  constructor(ctx: SimContext, index: number) {
    super(ctx, `R${index}`);
  }

  open(): void {
    this.track('open', KvDb.openReader(this.store, { path: PATH, clock: this.clock }), EXPECTED.reader, (result) => {
      if (result.ok) {
        this.reader = result.value;
        this.state = 'open';
      } else this.state = 'open-failed';
    });
  }

  /** refresh(), then a full scan; the state is judged at the end of the run. */
  refreshAndScan(): void {
    const reader = this.reader!;
    const required = new Set<number>();
    for (const w of this.ctx.writers) for (const c of w.commits) if (c.covered || (c.durable && c.outcome.kind === 'ok')) required.add(c.id);
    const step = this.ctx.step;
    this.busy = true;
    const run = async (): Promise<Map<string, string>> => {
      await reader.refresh();
      return scanAll(reader);
    };
    this.track('refresh+scan', run(), EXPECTED.reader, (result) => {
      this.busy = false;
      if (!result.ok) return;
      const issued = new Map(this.ctx.writers.map((w) => [w.index, w.commits.length > 0 ? w.commits.at(-1)!.id : 0]));
      this.observations.push({ state: result.value, required, issued, step });
      const own = [...result.value.keys()].filter((k) => k.startsWith('u')).map((k) => Number(k.slice(1)));
      this.ctx.trace(`${this.name} saw ${result.value.size} keys (epoch ${reader.writerEpoch}, seq ${reader.appliedSeq}; commit keys ${compressRanges(own)})`);
    });
  }

  close(): void {
    this.state = 'closing';
    this.track('close', this.reader?.close() ?? Promise.resolve(), EXPECTED.reader, () => (this.state = 'closed'));
  }
}

export async function scanAll(db: { scan(): AsyncIterable<{ key: Uint8Array; value: Uint8Array }> }): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const e of db.scan()) out.set(fromUtf8(e.key), fromUtf8(e.value));
  return out;
}

/** 1,2,3,5 -> "1-3 5". */
function compressRanges(ns: number[]): string {
  const sorted = [...ns].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    out.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return out.join(' ') || 'none';
}
