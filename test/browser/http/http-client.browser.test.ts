/**
 * Issue 30, item 3, in Chromium: a page reaches a Node backend (the project's global setup serves
 * a filesystem store over HTTP, test/setup/http-host.ts) with `connectHttp`, the worker client's
 * sibling for a URL: across origins (CORS, with an authorization header), it starts a workflow
 * function, follows its events, signals it and reads its typed result; a refused request is a
 * typed error.
 */
import { expect, expectTypeOf, inject, it } from 'vitest';
import { connectHttp, type HttpRunEvent } from '../../../src/browser/index.js';
import { isTaqubaError } from '../../../src/core/errors.js';
import { waitFor } from '../../support/wait.js';
import { PAGE_TOKEN, pageGreet } from './http-workflows.js';

const url = inject('httpHostUrl');

it('a page starts, follows, signals and awaits a run on a Node backend over HTTP', async () => {
  expect(new URL(url).origin).not.toBe(location.origin);
  const client = connectHttp(url, { headers: { authorization: PAGE_TOKEN } });
  const run = await client.start(pageGreet, 'page');
  const events: HttpRunEvent[] = [];
  client.subscribe((event) => events.push(event), { runId: run.runId });

  await waitFor(() => events.some((e) => e.type === 'run-status' && e.state === 'waiting-for-signal'), 'the run to wait for its greeting');
  expect(await client.signal(run.runId, 'greeting', 'Hello')).toBe('delivered');
  const value = await run.result();
  expectTypeOf(value).toEqualTypeOf<string>();
  expect(value).toBe('Hello, page!');
  await waitFor(() => events.some((e) => e.type === 'terminal'), 'the terminal event');
  expect(events.at(-1)).toMatchObject({ type: 'terminal', runId: run.runId, status: 'succeeded' });
  expect((await client.listFinishedRuns({ status: 'succeeded' })).runs.map((r) => r.runId)).toContain(run.runId);
  await client.close();

  const stranger = connectHttp(url);
  const refused = await stranger.listRuns().catch((e: unknown) => e);
  expect(isTaqubaError(refused, 'STORE_PERMISSION') && refused.details['reason']).toBe('unauthenticated');
  await stranger.close();
});
