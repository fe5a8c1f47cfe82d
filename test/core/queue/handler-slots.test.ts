import { describe, expect, it } from 'vitest';
import { HandlerSlots } from '../../../src/core/queue/workers/handler-slots.js';

/** A job whose settlement is issued and finished from the outside. */
function controlledJob(slots: HandlerSlots): { issue(): void; finish(): Promise<void> } {
  let issue!: () => void;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  slots.start((issued) => {
    issue = issued;
    return done;
  });
  return { issue: () => issue(), finish: async () => (finish(), await done, await Promise.resolve()) };
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
    let drained = false;
    const draining = slots.drain().then(() => (drained = true));
    await a.finish();
    expect(drained).toBe(false);
    await b.finish();
    await draining;
    expect(drained).toBe(true);
  });
});
