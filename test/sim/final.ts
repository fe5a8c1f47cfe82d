/**
 * The end of a run: live writers close or crash, the world turns calm (no injected failures) and
 * every pending call is delivered, then a fresh writer opens and its full scan is judged against
 * the history (checker.ts). Then: a second reopen (after whenIdle: flush, compaction, garbage
 * collection) and a reader must show the same state, and every state a reader saw during the run
 * must have been a prefix-consistent one too.
 */
import { KvDb, type KvDbOptions } from '../../src/core/kv/index.js';
import { scanAll } from './reader-actor.js';
import { checkState, type Bounds } from './checker.js';
import { PATH } from './context.js';
import { injectDamage } from './damage.js';
import { codeOf, isAcknowledged, isNotApplied, reportsDamage } from './history.js';
import { Prng, labelHash } from './prng.js';
import { SimStore } from './sim-store.js';
import type { SimRun } from './sim-run.js';
import { ProcessClock } from './virtual-time.js';

const FINAL = labelHash('final');

const finalBounds: Bounds = { required: isAcknowledged, allowed: (c) => !isNotApplied(c) };

export async function finish(run: SimRun): Promise<void> {
  const r = Prng.of(run.seed, FINAL);
  run.trace('wind-down');
  // Closed writers too: close() does not wait for reads in flight, so a writer paused while
  // closing can be 'closed' with store calls still held by the pause.
  for (const w of run.writerActors) if (w.paused) w.resume();
  for (const w of run.writerActors) {
    if (!w.alive) continue;
    if (w.state === 'open' && r.chance(0.6)) run.trace(w.close());
    else if (w.state !== 'closing') {
      w.crash(r);
      run.trace(`${w.name} crashes`);
    }
  }
  for (const reader of run.readerActors) if (reader.alive) reader.state === 'open' && !reader.busy ? reader.close() : reader.crash(r);
  run.world.calm = true;
  if (!(await run.quiesce(r))) return run.fail('liveness', 'store activity never ends after the wind-down');
  for (const a of [...run.writerActors, ...run.readerActors]) {
    if (a.state === 'crashed' || a.pending.size === 0) continue;
    return run.fail('liveness', `${a.name}'s calls never settled although nothing is left to run: ${[...a.pending.values()].join(', ')}`);
  }
  if (run.config.damage && run.stats.damage === 0) {
    const line = injectDamage(run.world, r);
    if (line) {
      run.damaged = true;
      run.stats.damage++;
      run.trace(line);
    }
  }
  if (run.violation || run.detected) return;

  const state = await readState(run, r, 'final open', false);
  if (!state) return;
  const verdict = checkState(run.writers, state, finalBounds, 'final state');
  if (!verdict.ok) return run.fail(verdict.violation.invariant, verdict.violation.message);
  if (verdict.inconclusive) run.inconclusive = true;

  const again = await readState(run, r, 'second reopen (after whenIdle)', true);
  if (!again) return;
  if (!sameState(state, again)) return run.fail('stable-reopen', `a second reopen shows another state: ${diff(state, again)}`);
  const seen = await readByReader(run, r);
  if (!seen) return;
  if (!sameState(state, seen)) return run.fail('reader-agrees', `a reader shows another state than the writer: ${diff(state, seen)}`);

  if (run.damaged) return; // readers' states before the damage are not comparable with what it broke
  for (const reader of run.readerActors) {
    for (const obs of reader.observations) {
      const bounds: Bounds = {
        required: (c) => obs.required.has(c.id),
        allowed: (c) => c.id <= (obs.issued.get(c.writer) ?? 0),
      };
      const v = checkState(run.writers, obs.state, bounds, `${reader.name}'s scan at step ${obs.step}`);
      if (!v.ok) return run.fail(`reader-${v.violation.invariant}`, v.violation.message);
    }
  }
}

/** Opens a fresh writer (a new process) and scans everything; undefined after a violation or detected damage. */
async function readState(run: SimRun, r: Prng, what: string, idle: boolean): Promise<Map<string, string> | undefined> {
  const pid = run.nextPid();
  const store = new SimStore(run.world, pid, `F${pid}`, run.seed);
  const options: KvDbOptions = { path: PATH, clock: new ProcessClock(run.time, pid), memtableBytes: r.pick([1024, 4096, 65536]), maxRuns: r.int(2, 4), blockBytes: 256 };
  run.trace(`${what}: F${pid} opens (memtable ${options.memtableBytes})`);
  const opened = await run.until(KvDb.open(store, options), r, what);
  if (!opened) return undefined;
  if (!opened.ok) return void refused(run, what, opened.error);
  const db = opened.value;
  if (idle) {
    const settled = await run.until(db.whenIdle(), r, `${what}: whenIdle`);
    if (!settled) return undefined;
    if (!settled.ok) return void refused(run, `${what}: whenIdle`, settled.error);
  }
  const scanned = await run.until(scanAll(db), r, `${what}: scan`);
  if (!scanned) return undefined;
  if (!scanned.ok) return void refused(run, `${what}: scan`, scanned.error);
  const closed = await run.until(db.close(), r, `${what}: close`);
  if (!closed) return undefined;
  if (!closed.ok) return void refused(run, `${what}: close`, closed.error);
  run.trace(`${what}: ${scanned.value.size} keys`);
  return scanned.value;
}

async function readByReader(run: SimRun, r: Prng): Promise<Map<string, string> | undefined> {
  const pid = run.nextPid();
  const store = new SimStore(run.world, pid, `F${pid}`, run.seed);
  const opened = await run.until(KvDb.openReader(store, { path: PATH, clock: new ProcessClock(run.time, pid) }), r, 'final reader open');
  if (!opened) return undefined;
  if (!opened.ok) return void refused(run, 'final reader open', opened.error);
  const scanned = await run.until(scanAll(opened.value), r, 'final reader scan');
  if (!scanned) return undefined;
  if (!scanned.ok) return void refused(run, 'final reader scan', scanned.error);
  await opened.value.close();
  return scanned.value;
}

/** A refusal in the calm final phase: CORRUPT_DATA after damage is the detection we want. */
function refused(run: SimRun, what: string, error: unknown): void {
  if (run.damaged && reportsDamage(error)) {
    run.detected ??= `${codeOf(error)} at ${what}: ${(error as Error).message}`;
    run.trace(`damage detected: ${run.detected}`);
    return;
  }
  run.fail('calm-reopen-works', `${what} rejected with ${codeOf(error)}: ${(error as Error)?.stack ?? String(error)}`);
}

function sameState(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

function diff(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): string {
  const out: string[] = [];
  for (const k of new Set([...a.keys(), ...b.keys()])) {
    if (a.get(k) !== b.get(k)) out.push(`${k}: ${a.get(k)?.slice(0, 12) ?? '(nothing)'} vs ${b.get(k)?.slice(0, 12) ?? '(nothing)'}`);
  }
  return out.slice(0, 6).join('; ');
}
