/** The job of the jobs crash test, shared by the child and the parent (same name, same types). */
import { defineJob, type Job } from '../../src/core/jobs/index.js';

/** `slow.square`: n → n², keyed by n. With `hang`, every run waits forever after `onStart`. */
export function squareJob(hang: boolean, onStart: (n: number) => void = () => undefined): Job<{ n: number }, number> {
  return defineJob({
    name: 'slow.square',
    idempotencyKey: (input: { n: number }) => `square:${input.n}`,
    run: async ({ n }: { n: number }) => {
      onStart(n);
      if (hang) await new Promise(() => undefined);
      return n * n;
    },
  });
}
