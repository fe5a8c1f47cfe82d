/** One started job: whether it still holds its handler slot. */
interface SlotJob {
  holdsSlot: boolean;
}

/**
 * Slot accounting of the worker loop (`runClaimLoop`, which the workflow runtime runs too). Jobs
 * are counted, not collected. A job holds a handler slot while user code runs; once its settlement's
 * commit is issued (applied, so the next handler sees it) the wait for the WAL put happens off
 * the slot, so the loop keeps claiming while a put is in flight. Settlements in progress are
 * capped at max(256, 32 x concurrency): a stalled store stops the loop instead of piling them up.
 * The cap is loose on purpose: with 8 x concurrency, a workflow chain on the filesystem store
 * filled it while a put was in flight and its loop sat idle (event-loop utilization 0.90-0.93,
 * 0.97 at 32 x; steps per second +3-30% in alternating runs).
 * A finishing job wakes the loop if it waits (for a slot, for the cap, or for the last
 * settlement at shutdown).
 *
 * @internal
 */
export class HandlerSlots {
  private running = 0;
  private settling = 0;
  private wake: (() => void) | undefined;
  private readonly maxSettling: number;

  constructor(private readonly concurrency: number) {
    this.maxSettling = Math.max(256, 32 * concurrency);
  }

  /** Slots free for new claims now (0 while the settlement cap is reached). */
  get free(): number {
    return this.settling >= this.maxSettling ? 0 : this.concurrency - this.running;
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
   * is issued; the slot frees then (or when `run` settles, whichever comes first).
   */
  start(run: (issued: () => void) => Promise<unknown>): void {
    const job: SlotJob = { holdsSlot: true };
    this.running++;
    // Inline arrows rather than named local functions: a per-call closure with a name costs a
    // name definition per job under transpilers that keep names (tsx, esbuild's keepNames).
    void run(() => this.issue(job)).then(
      () => this.finish(job),
      () => this.finish(job),
    );
  }

  private issue(job: SlotJob): void {
    if (!job.holdsSlot) return;
    job.holdsSlot = false;
    this.running--;
    this.settling++;
    this.wakeLoop();
  }

  private finish(job: SlotJob): void {
    if (job.holdsSlot) {
      job.holdsSlot = false;
      this.running--;
    } else this.settling--;
    this.wakeLoop();
  }

  /** True when every started job has settled. */
  get idle(): boolean {
    return this.running + this.settling === 0;
  }

  /** Resolves once every started job has settled. */
  async drain(): Promise<void> {
    while (!this.idle) await this.sleep();
  }
}
