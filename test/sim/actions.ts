/**
 * The client actions a step may take, weighted by what the current state allows: open a writer
 * (options varied per open), commit, hold a transaction's snapshot across commits, flush,
 * whenIdle, read, close, crash a process or the whole machine, pause and resume a process, run
 * a reader, and (damage runs) damage an object while no writer is alive.
 */
import { ReaderActor } from './reader-actor.js';
import { WriterActor } from './writer-actor.js';
import { injectDamage } from './damage.js';
import type { Prng } from './prng.js';
import type { SimRun } from './sim-run.js';

type Action = (run: SimRun, r: Prng) => string | undefined;

/** Weight of doing nothing this step (a delivery instead): keeps crashes and opens from piling up while nothing is open. */
const WAIT = 6;

/** At most this many damages per run. */
const MAX_DAMAGE = 2;

export function chooseAction(run: SimRun, r: Prng): string | undefined {
  const { config } = run;
  const alive = run.writerActors.filter((w) => w.alive);
  const running = alive.filter((w) => !w.paused);
  const open = running.filter((w) => w.state === 'open' && w.db!.failed === undefined);
  const failed = running.filter((w) => w.state === 'open' && w.db!.failed !== undefined);
  const withTxn = open.filter((w) => w.txns.length > 0);
  const reader = run.readerActors.find((x) => x.alive);
  const weights: [Action, number][] = [
    [() => undefined, WAIT],
    [openWriter, alive.length < config.maxWriters ? (open.length === 0 ? 6 : 1.5) : 0],
    [(_, rr) => rr.pick(open).commit(rr), open.length > 0 ? 14 : 0],
    [(_, rr) => rr.pick(open).txnBegin(rr), config.txns && open.some((w) => w.txns.length < 2) ? 1.2 : 0],
    [(_, rr) => rr.pick(withTxn).txnCommit(rr), withTxn.length > 0 ? 2.5 : 0],
    [(_, rr) => rr.pick(open).flush(), open.length > 0 ? 1.5 : 0],
    [(_, rr) => rr.pick(open).whenIdle(), open.length > 0 ? 0.6 : 0],
    [(_, rr) => rr.pick(open).get(rr), open.length > 0 ? 2 : 0],
    [(_, rr) => rr.pick(open).close(), open.length > 0 ? 0.7 : 0],
    [(_, rr) => rr.pick(failed).close(), failed.length > 0 ? 3 : 0],
    [crashWriter, config.crashes && alive.length > 0 ? (open.length > 0 ? 0.5 : 0.15) : 0],
    [pause, config.pauses && running.length > 0 ? 0.3 : 0],
    [resume, alive.some((w) => w.paused) ? 1 : 0],
    [crashMachine, config.machineCrashes ? 0.12 : 0],
    [openReader, config.readers && !reader ? 0.6 : 0],
    [() => (reader!.refreshAndScan(), `${reader!.name} refresh and scan`), reader?.state === 'open' && !reader.busy ? 1.2 : 0],
    [damage, config.damage && alive.length === 0 && run.stats.damage < MAX_DAMAGE && run.world.scheduler.size === 0 ? 3 : 0],
  ];
  const action = r.weighted(weights);
  return action?.(run, r);
}

function openWriter(run: SimRun, r: Prng): string {
  const w = new WriterActor(run, run.writerActors.length + 1, r);
  run.writerActors.push(w);
  run.stats.opens++;
  w.open();
  return `${w.name} opens (pid ${w.pid}): ${w.describeOptions()}`;
}

function crashWriter(run: SimRun, r: Prng): string {
  const w = r.pick(run.writerActors.filter((x) => x.alive));
  w.crash(r);
  run.stats.crashes++;
  return `${w.name} crashes`;
}

function pause(run: SimRun, r: Prng): string {
  const w = r.pick(run.writerActors.filter((x) => x.alive && !x.paused));
  w.pause();
  return `${w.name} pauses`;
}

function resume(run: SimRun, r: Prng): string {
  const w = r.pick(run.writerActors.filter((x) => x.alive && x.paused));
  w.resume();
  return `${w.name} resumes`;
}

function crashMachine(run: SimRun, r: Prng): string {
  // Every process still running dies, closed ones too (a closed writer may still have a put in flight).
  const victims = [...run.writerActors, ...run.readerActors].filter((a) => run.world.isLive(a.pid));
  for (const a of victims) a.state = 'crashed';
  run.world.crashMachine(
    victims.map((a) => a.pid),
    r,
  );
  for (const a of victims) {
    run.time.kill(a.pid);
    a.pending.clear();
  }
  run.stats.machineCrashes++;
  return `machine crash (${victims.map((a) => a.name).join(', ') || 'no process'})`;
}

function openReader(run: SimRun): string {
  const reader = new ReaderActor(run, run.readerActors.length + 1);
  run.readerActors.push(reader);
  reader.open();
  return `${reader.name} opens (pid ${reader.pid})`;
}

function damage(run: SimRun, r: Prng): string {
  const line = injectDamage(run.world, r);
  if (!line) return 'damage: nothing to damage';
  run.damaged = true;
  run.stats.damage++;
  return line;
}
