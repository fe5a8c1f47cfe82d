/**
 * Issue #13: a queue worker loop's failed jobs are visible without a hook. The queue's logger sees
 * a retry at warn (queue, job id, attempt, error, next delay, the stack of an unexpected throw) and
 * a dead letter at error (queue, job id, reason); `logger: false` sees nothing.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MockClock } from '../../../src/core/clock.js';
import type { LogFields, LoggerOption } from '../../../src/core/logger.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { PermanentFailure, Queue, runWorkerConcurrent } from '../../../src/core/queue/index.js';
import { b, until } from './harness.js';

type Line = [level: string, message: string, fields: LogFields | undefined];

function capture(lines: Line[]) {
  return {
    warn: (m: string, f?: LogFields) => void lines.push(['warn', m, f]),
    error: (m: string, f?: LogFields) => void lines.push(['error', m, f]),
  };
}


const open = (logger: LoggerOption) =>
  Queue.open(new MemoryObjectStore(), 'w', {
    clock: new MockClock(1_700_000_000_000),
    reaperIntervalMs: 1e12,
    schedulerIntervalMs: 1e12,
    logger,
    defaultQueueConfig: { maxAttempts: 2, retryBackoffBaseMs: 0 },
  });

afterEach(() => {
  vi.restoreAllMocks();
});

describe('queue worker logging', () => {
  it('logs a retry at warn and, out of attempts, the dead letter at error', async () => {
    const lines: Line[] = [];
    const q = await open(capture(lines));
    const id = await q.enqueue('jobs', b('x'));
    const stop = new AbortController();
    const loop = runWorkerConcurrent(q, 'jobs', async () => {
      throw new Error('downstream 503');
    }, 1, { signal: stop.signal, pollIntervalMs: 5 });
    await until(() => lines.some(([level]) => level === 'error'), 'the dead letter log');
    stop.abort();
    await loop;
    await q.close();
    expect(lines.map(([level, message]) => [level, message])).toEqual([
      ['warn', 'job failed; retrying'],
      ['error', 'job dead-lettered'],
    ]);
    expect(lines[0]![2]).toMatchObject({ queue: 'jobs', jobId: id, attempt: 1, maxAttempts: 2, error: 'downstream 503', nextDelayMs: 0 });
    expect(lines[0]![2]!.stack).toMatch(/^Error: downstream 503\n/);
    expect(lines[1]![2]).toMatchObject({ queue: 'jobs', jobId: id, attempt: 2, maxAttempts: 2, reason: 'downstream 503' });
  });

  it('a PermanentFailure dead-letters at once, logged at error without a stack', async () => {
    const lines: Line[] = [];
    const q = await open(capture(lines));
    await q.enqueue('jobs', b('x'));
    const stop = new AbortController();
    const loop = runWorkerConcurrent(q, 'jobs', async () => {
      throw new PermanentFailure('bad input');
    }, 1, { signal: stop.signal, pollIntervalMs: 5 });
    await until(() => lines.length > 0, 'a log line');
    stop.abort();
    await loop;
    await q.close();
    expect(lines).toHaveLength(1);
    expect(lines[0]![0]).toBe('error');
    expect(lines[0]![2]).toMatchObject({ reason: 'bad input', attempt: 1 });
    expect(lines[0]![2]).not.toHaveProperty('stack');
  });

  it('logger: false logs nothing (and the job is still retried, then dead-lettered)', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const q = await open(false);
    await q.enqueue('jobs', b('x'));
    const stop = new AbortController();
    let calls = 0;
    const loop = runWorkerConcurrent(q, 'jobs', async () => {
      calls++;
      throw new Error('downstream 503');
    }, 1, { signal: stop.signal, pollIntervalMs: 5 });
    let dead = 0;
    await until(() => {
      void q.stats('jobs').then((s) => (dead = s.dead));
      return dead === 1;
    }, 'the dead letter');
    stop.abort();
    await loop;
    await q.close();
    expect(calls).toBe(2);
    expect(warn).not.toHaveBeenCalled();
    expect(error).not.toHaveBeenCalled();
  });
});
