/**
 * What a running job may do with its handler slot: give it up while it only waits for the store
 * (a durable write of its own), and take one back before its code runs again. Not a type of
 * any public entry point, but kept in the shipped declarations: internal modules' declarations
 * refer to it.
 */
export interface HandlerSlot {
  /** Whether the job gave its slot up and has not taken one back (false once its settlement is issued). */
  readonly lent: boolean;
  /** Gives the slot up (a no-op unless the job holds one): the loop may start another job in it. */
  release(): void;
  /** Takes a slot again, ahead of new claims; resolves once the job holds one (at once unless `lent`). */
  reacquire(): Promise<void>;
}

/** Waits until the job holds a slot again, unless its settlement was issued meanwhile. */
export async function takeSlotBack(slot: HandlerSlot): Promise<void> {
  while (slot.lent) await slot.reacquire();
}

/**
 * Runs `wait` (a durable write of the job's own, with none of its code running) with the slot lent
 * to the loop, and takes one back before returning. Without a slot, only runs `wait`.
 */
export async function withSlotLent<T>(slot: HandlerSlot | undefined, wait: () => Promise<T>): Promise<T> {
  if (slot === undefined) return wait();
  slot.release();
  try {
    return await wait();
  } finally {
    await takeSlotBack(slot);
  }
}

type JobState = 'running' | 'released' | 'waiting' | 'settling' | 'done';

/** One started job and where it stands in the accounting. */
class SlotJob implements HandlerSlot {
  state: JobState = 'running';
  /** While `waiting`: the reacquire's promise and its resolver. */
  waited: Promise<void> | undefined;
  grant: (() => void) | undefined;

  constructor(private readonly slots: HandlerSlots) {}

  get lent(): boolean {
    return this.state === 'released' || this.state === 'waiting';
  }

  release(): void {
    this.slots.release(this);
  }

  reacquire(): Promise<void> {
    return this.slots.reacquire(this);
  }
}

/**
 * Slot accounting of the worker loop (`runClaimLoop`, which the workflow runtime runs too). Jobs
 * are counted, not collected. A job holds a handler slot while user code runs; once its settlement's
 * commit is issued (applied, so the next handler sees it) the wait for the WAL put happens off
 * the slot, so the loop keeps claiming while a put is in flight. A job may also give its slot up
 * while it waits for a durable write in the middle of its work (a workflow function between two
 * steps) and take one back before its code goes on, ahead of new claims. Jobs settling or
 * waiting without a slot are capped at max(256, 32 x concurrency): a stalled store stops the
 * loop instead of piling them up. The cap is loose on purpose: with 8 x concurrency, a workflow
 * chain on the filesystem store filled it while a put was in flight and its loop sat idle
 * (event-loop utilization 0.90-0.93, 0.97 at 32 x; steps per second +3-30% in alternating runs).
 * A slot that frees goes to a job waiting to take one back first, else wakes the loop if it waits
 * (for a slot, for the cap, or for the last settlement at shutdown).
 *
 * @internal
 */
export class HandlerSlots {
  private running = 0;
  private settling = 0;
  /** Jobs that gave their slot up (the waiting ones included). */
  private released = 0;
  /** Jobs waiting to take a slot back, first come first served. */
  private readonly waiters: SlotJob[] = [];
  private wake: (() => void) | undefined;
  private readonly maxSettling: number;

  constructor(private readonly concurrency: number) {
    this.maxSettling = Math.max(256, 32 * concurrency);
  }

  /** Slots free for new claims now (0 while the cap is reached or a job waits to take one back). */
  get free(): number {
    if (this.settling + this.released >= this.maxSettling) return 0;
    return Math.max(0, this.concurrency - this.running - this.waiters.length);
  }

  /** Wakes a loop parked in `sleep()` (also used as the shutdown signal's listener). */
  readonly wakeLoop = (): void => {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  };

  /** Resolves at the next slot change (or `wakeLoop()`). */
  sleep(): Promise<void> {
    return new Promise<void>((resolve) => (this.wake = resolve));
  }

  /**
   * Runs one job in a slot. `run` gets an `issued` callback to call once the settlement's commit
   * is issued (the slot frees then, or when `run` settles, whichever comes first) and the job's
   * `HandlerSlot`.
   */
  start(run: (issued: () => void, slot: HandlerSlot) => Promise<unknown>): void {
    const job = new SlotJob(this);
    this.running++;
    // Inline arrows rather than named local functions: a per-call closure with a name costs a
    // name definition per job under transpilers that keep names (tsx, esbuild's keepNames).
    void run(() => this.settle(job, 'settling'), job).then(
      () => this.settle(job, 'done'),
      () => this.settle(job, 'done'),
    );
  }

  /** @internal (through `HandlerSlot.release`) */
  release(job: SlotJob): void {
    if (job.state !== 'running') return;
    job.state = 'released';
    this.running--;
    this.released++;
    this.handOn();
  }

  /** @internal (through `HandlerSlot.reacquire`) */
  reacquire(job: SlotJob): Promise<void> {
    if (job.state === 'waiting') return job.waited!;
    if (job.state !== 'released') return Promise.resolve(); // holding, or its settlement was issued
    if (this.running < this.concurrency && this.waiters.length === 0) {
      this.take(job);
      return Promise.resolve();
    }
    job.state = 'waiting';
    job.waited = new Promise<void>((resolve) => (job.grant = resolve));
    this.waiters.push(job);
    return job.waited;
  }

  /** The job's settlement was issued (`settling`) or its run ended (`done`). */
  private settle(job: SlotJob, to: 'settling' | 'done'): void {
    const from = job.state;
    if (from === 'done' || from === to) return;
    if (from === 'running') this.running--;
    else if (from === 'settling') this.settling--;
    else {
      // Released or waiting: a delivery can end while one of its branches waits for a slot.
      if (from === 'waiting') this.waiters.splice(this.waiters.indexOf(job), 1);
      this.released--;
    }
    job.state = to;
    if (to === 'settling') this.settling++;
    this.handOn();
  }

  private take(job: SlotJob): void {
    this.released--;
    this.running++;
    job.state = 'running';
  }

  /** Gives free slots to the jobs waiting to take one back, then wakes the loop. */
  private handOn(): void {
    while (this.waiters.length > 0 && this.running < this.concurrency) {
      const job = this.waiters.shift()!;
      this.take(job);
      const grant = job.grant!;
      job.grant = undefined;
      job.waited = undefined;
      grant();
    }
    this.wakeLoop();
  }

  /** True when every started job has settled. */
  get idle(): boolean {
    return this.running + this.settling + this.released === 0;
  }

  /** Resolves once every started job has settled. */
  async drain(): Promise<void> {
    while (!this.idle) await this.sleep();
  }
}
