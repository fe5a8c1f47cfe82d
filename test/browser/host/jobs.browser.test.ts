/**
 * Typed jobs through the browser host: the worker registers the jobs (pages/app-jobs.ts), the
 * page submits and awaits them with `client.jobs`, typed by the same definitions; a job's own
 * failure arrives as `JobFailedError` with its payload; a follower routes job calls to the leader.
 * (The reload re-attach is in tabs.persistent.browser.test.ts.)
 */
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { InvalidArgumentError, isTaqubaError, TaqubaError } from '../../../src/core/errors.js';
import { defineJob, JobFailedError } from '../../../src/core/jobs/index.js';
import { fromWireError, toWireError } from '../../../src/browser/index.js';
import { startHost, TestLog, uniqueName, waitFor, type TestHost } from './harness.js';
import { greet, hang, refuse } from './pages/app-jobs.js';

const started: TestHost[] = [];
const logs: TestLog[] = [];

function host(name: string): TestHost {
  const log = new TestLog(uniqueName('log'));
  logs.push(log);
  const h = startHost('indexeddb', name, log.name);
  started.push(h);
  return h;
}

afterEach(() => {
  for (const h of started.splice(0)) h.worker.terminate();
  for (const l of logs.splice(0)) l.close();
});

describe('jobs through the worker host', () => {
  it('submits a job from the page and awaits its typed result', async () => {
    const a = host(uniqueName('jobs'));
    const handle = await a.client.jobs.submit(greet, { name: 'ada' });
    expect(handle).toMatchObject({ jobName: 'test.greet', newlySubmitted: true });
    const out = await handle.result();
    expectTypeOf(out).toEqualTypeOf<{ greeting: string; at: Date; tags: Map<string, string> }>();
    expect(out.greeting).toBe('hello ada');
    // Decoded on the page by the job's codec: the Date and the Map are real ones.
    expect(out.at).toBeInstanceOf(Date);
    expect(out.tags.get('job')).toBe(handle.id);
    expect(await handle.fetchResult()).toMatchObject({ ok: true, value: { greeting: 'hello ada' } });
    // A fresh handle on the id reads the same stored outcome.
    expect((await a.client.jobs.handle(greet, handle.id).result()).greeting).toBe('hello ada');
  });

  it("a job's own failure arrives as JobFailedError with its typed payload", async () => {
    const a = host(uniqueName('jobs-fail'));
    const handle = await a.client.jobs.submit(refuse, { code: 7 });
    const error = await handle.result().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(JobFailedError);
    expect(isTaqubaError(error, 'JOB_FAILED')).toBe(true);
    const failure = error as JobFailedError<{ code: number; why: string }>;
    expect(failure).toMatchObject({ reason: 'job_error', jobId: handle.id, jobName: 'test.refuse', error: { code: 7, why: 'refused' } });
    const stored = await handle.fetchResult();
    expect(stored?.ok).toBe(false);
    if (stored && !stored.ok) {
      expectTypeOf(stored.error.error).toEqualTypeOf<{ readonly code: number; readonly why: string } | undefined>();
      expect(stored.error.error).toEqual({ code: 7, why: 'refused' });
    }
  });

  it("a page's handle reads the job's status and cancels it: result() then says cancelled", async () => {
    const a = host(uniqueName('jobs-cancel'));
    const handle = await a.client.jobs.submit(hang, null);
    const waiting = handle.result().catch((e: unknown) => e);
    await waitFor(async () => (await handle.status())?.state === 'running', 'the job to run');
    expect(await handle.cancel()).toBe(true);
    expect(await waiting).toMatchObject({ code: 'JOB_FAILED', reason: 'cancelled', jobId: handle.id });
    expect(await handle.status(), 'no status once the job ended').toBeNull();
    expect(await handle.cancel(), 'a job no longer active').toBe(false);
    const fetched = await handle.fetchResult();
    expect(fetched && !fetched.ok && fetched.error.reason).toBe('cancelled');
  });

  it('JobFailedError keeps its class, code, fields and payload through the wire-error records', () => {
    const original = new JobFailedError({ jobId: 'j1', jobName: 'x', reason: 'job_error', message: 'no', error: { at: new Date(5), n: 1n } });
    const back = fromWireError(structuredClone(toWireError(original)));
    expect(back).toBeInstanceOf(JobFailedError);
    expect(back).toMatchObject({ code: 'JOB_FAILED', name: 'JobFailedError', reason: 'job_error', jobId: 'j1', jobName: 'x', message: original.message });
    expect((back as JobFailedError).error).toEqual({ at: new Date(5), n: 1n });
  });

  it('a follower routes job calls to the leader; infrastructure errors keep their own codes', async () => {
    const name = uniqueName('jobs-route');
    const a = host(name);
    await a.role('leader');
    const b = host(name);
    await b.role('follower');
    const handle = await b.client.jobs.submit(greet, { name: 'bob', delayMs: 50 });
    expect((await handle.result()).greeting).toBe('hello bob');
    expect((await a.client.jobs.handle(greet, handle.id).result()).greeting).toBe('hello bob');

    // Not registered in the worker: INVALID_ARGUMENT, not JOB_FAILED.
    const stranger = defineJob({ name: 'test.unknown', run: () => 1 });
    await expect(b.client.jobs.submit(stranger, undefined)).rejects.toBeInstanceOf(InvalidArgumentError);
    // Never submitted: NOT_FOUND.
    const missing = await b.client.jobs.handle(greet, 'no-such-job').result().catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(TaqubaError);
    expect(isTaqubaError(missing, 'NOT_FOUND')).toBe(true);
    expect(await b.client.jobs.handle(greet, 'no-such-job').fetchResult()).toBeNull();
  });
});
