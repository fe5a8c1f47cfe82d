import { describe, expect, it } from 'vitest';
import { HandlerSlots, type HandlerSlot } from '../../../src/core/queue/workers/handler-slots.js';

/** A job whose settlement is issued and finished from the outside. */
function controlledJob(slots: HandlerSlots): { issue(): void; finish(): Promise<void>; slot: HandlerSlot } {
  let issue!: () => void;
  let finish!: () => void;
  let slot!: HandlerSlot;
  const done = new Promise<void>((resolve) => (finish = resolve));
  slots.start((issued, own) => {
    issue = issued;
    slot = own;
    return done;
  });
  return { issue: () => issue(), finish: async () => (finish(), await done, await Promise.resolve()), slot };
}

/** `drain` resolves only once `first`, then `second`, have finished. */
async function expectDrainedAfter(slots: HandlerSlots, first: { finish(): Promise<void> }, second: { finish(): Promise<void> }): Promise<void> {
  let drained = false;
  const draining = slots.drain().then(() => (drained = true));
  await first.finish();
  expect(drained).toBe(false);
  await second.finish();
  await draining;
  expect(drained).toBe(true);
  expect(slots.idle).toBe(true);
}

/** Whether `p` has settled (after the microtasks queued so far). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((resolve) => setTimeout(resolve, 0));
  return done;
}

describe('HandlerSlots', () => {
  it('a job holds its slot until its settlement is issued', async () => {
    const slots = new HandlerSlots(2);
    const a = controlledJob(slots);
    controlledJob(slots);
    expect(slots.free).toBe(0);
    a.issue();
    expect(slots.free).toBe(1);
    a.issue(); // a second call changes nothing
    expect(slots.free).toBe(1);
  });

  it('stops handing out slots while max(256, 32 x concurrency) settlements wait for their put', async () => {
    const slots = new HandlerSlots(2);
    const jobs = Array.from({ length: 256 }, () => {
      const job = controlledJob(slots);
      job.issue();
      return job;
    });
    expect(slots.free).toBe(0); // a stalled store: the loop stops claiming
    await jobs[0].finish();
    expect(slots.free).toBe(2);

    const wide = new HandlerSlots(16); // 32 x 16 = 512
    for (let i = 0; i < 511; i++) controlledJob(wide).issue();
    expect(wide.free).toBe(16);
    controlledJob(wide).issue();
    expect(wide.free).toBe(0);
  });

  it('drain resolves once every started job has settled', async () => {
    const slots = new HandlerSlots(4);
    const a = controlledJob(slots);
    const b = controlledJob(slots);
    b.issue();
    await expectDrainedAfter(slots, a, b);
  });

  it('a job that releases its slot lends it to the loop, and takes one back ahead of new claims', async () => {
    const slots = new HandlerSlots(1);
    const a = controlledJob(slots);
    expect(slots.free).toBe(0);
    a.slot.release();
    expect(a.slot.lent).toBe(true);
    expect(slots.free).toBe(1);
    a.slot.release(); // a second call changes nothing
    expect(slots.free).toBe(1);
    const b = controlledJob(slots); // the loop ran another job in it
    expect(slots.free).toBe(0);
    const back = a.slot.reacquire();
    expect(await settled(back)).toBe(false); // b holds the one slot
    b.issue(); // b's settlement is issued: the slot goes to a, not to a new claim
    expect(await settled(back)).toBe(true);
    expect(a.slot.lent).toBe(false);
    expect(slots.free).toBe(0);
    await expect(a.slot.reacquire()).resolves.toBeUndefined(); // holding: at once
  });

  it('reserves freed slots for jobs waiting to take one back', async () => {
    const slots = new HandlerSlots(2);
    const a = controlledJob(slots);
    const b = controlledJob(slots);
    a.slot.release();
    const c = controlledJob(slots);
    const back = a.slot.reacquire();
    expect(slots.free).toBe(0);
    expect(await settled(back)).toBe(false);
    await c.finish();
    expect(await settled(back)).toBe(true);
    expect(slots.free).toBe(0); // a and b hold both
    b.issue();
    expect(slots.free).toBe(1);
  });

  it('a job that ends while it waits for a slot gives up its place, and the accounting stays whole', async () => {
    const slots = new HandlerSlots(1);
    const a = controlledJob(slots);
    a.slot.release();
    const b = controlledJob(slots);
    const back = a.slot.reacquire();
    a.issue(); // a's delivery ended (a halted function) while one of its branches waited
    expect(slots.free).toBe(0); // b still holds the slot; a's wait no longer reserves one
    b.issue();
    expect(slots.free).toBe(1);
    expect(await settled(back)).toBe(false); // abandoned, never granted
    expect(a.slot.lent).toBe(false); // its settlement was issued: nothing to take back
    await expectDrainedAfter(slots, a, b);
  });

  it('counts jobs without a slot toward the cap, and drain waits for them', async () => {
    const slots = new HandlerSlots(2);
    const parked = Array.from({ length: 256 }, () => {
      const job = controlledJob(slots);
      job.slot.release();
      return job;
    });
    expect(slots.free).toBe(0);
    await parked[0].finish();
    expect(slots.free).toBe(2);
    expect(slots.idle).toBe(false);
    for (const job of parked.slice(1)) await job.finish();
    expect(slots.idle).toBe(true);
  });
});
