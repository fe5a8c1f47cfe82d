/** The runs of the flow-control crash test, in submission order (shared by the test and its child). */
export const RUNS = [
  { runId: 'a0', key: 'a', limit: 1 },
  { runId: 'b0', key: 'b', limit: 2 },
  { runId: 'a1', key: 'a', limit: 1 },
  { runId: 'b1', key: 'b', limit: 2 },
  { runId: 'b2', key: 'b', limit: 2 },
  { runId: 'a2', key: 'a', limit: 1 },
  { runId: 'b3', key: 'b', limit: 2 },
] as const;
