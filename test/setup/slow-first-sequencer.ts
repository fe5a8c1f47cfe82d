/**
 * Starts the longest test files first. On a fresh clone vitest has no timings cached and orders
 * files by project name and then as found, so a 2-minute process test could start last and leave
 * one worker idle while it runs: the suite's wall time is then set by that tail. The list holds
 * the files that took over 40 s in CI on this 2-core machine, longest first.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SLOW_FIRST = [
  'test/crash/cluster-s3.test.ts',
  'test/crash/fencing-sigstop.test.ts',
  'test/demo/demo.test.ts',
  'test/demo/inspector.test.ts',
  'test/docs/readme-snippets.test.ts',
  'test/package/package.test.ts',
];

function rank(spec: TestSpecification): number {
  const i = SLOW_FIRST.findIndex((path) => spec.moduleId.endsWith(path));
  return i < 0 ? SLOW_FIRST.length : i;
}

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
