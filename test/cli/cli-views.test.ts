/**
 * The human timeline view on its own (the CLI tests cover it end to end on real stores): a
 * finished run whose step jobs were deleted at ack says which writer options keep more.
 */
import { describe, expect, it } from 'vitest';
import { makeColors } from '../../src/cli/format.js';
import { timelineView } from '../../src/cli/views.js';
import type { RunTimeline, TimelineJob } from '../../src/core/workflow/history/run-timeline.js';

const NOW = 1_800_000_000_000;
const view = (t: RunTimeline) => timelineView(t, { colors: makeColors(false), nowMs: NOW });

const doneJob: TimelineJob = {
  jobId: 'j0',
  status: 'done',
  attempts: 1,
  maxAttempts: 3,
  interruptions: 0,
  enqueuedAt: NOW - 5000,
  claimedAt: NOW - 4900,
  completedAt: NOW - 4000,
  failedAt: null,
  runAt: null,
  lastError: null,
  history: [],
};

function terminated(jobs: readonly TimelineJob[]): RunTimeline {
  return {
    runId: 'report-42',
    status: 'terminated',
    active: null,
    headers: {},
    steps: [{ step: 0, jobs, signal: null, outcome: null }],
    memo: [{ scope: 0, keyHash: 'ab'.repeat(32), size: 32 }],
    terminal: null,
    workflowFunction: null,
    terminatedAtMs: null,
    truncated: false,
  };
}

describe('timeline view', () => {
  it('a finished run whose step jobs were not kept names the options that keep them', () => {
    const text = view(terminated([]));
    expect(text).toContain('step 0  no job kept');
    expect(text).toMatch(/hint: .*keepDoneMs.*stepOutputReplay/);
  });

  it('no hint when every step has its job', () => {
    const text = view(terminated([doneJob]));
    expect(text).toContain('job j0 done attempts 1/3');
    expect(text).not.toContain('hint:');
  });
});
