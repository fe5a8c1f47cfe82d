/**
 * Schedules on the browser host (issue 29): `serveWorkflowRuntime({ schedules })` fires on the
 * leader tab only, one run per tick; a follower tab lists the schedules (`client.listSchedules()`,
 * answered by the leader); when the leader's worker dies, the tab that takes over goes on from
 * the firing the old leader recorded (no tick skipped, none fired twice); the inspector shows the
 * schedule with its next and last firing. Cron time runs 30 times faster than real time in the
 * workers (pages/cron-worker.ts), so a minutely schedule fires every two seconds.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type HostEvent, type WorkflowClient } from '../../../src/browser/index.js';
import { defineTaqubaInspector, type TaqubaInspectorElement } from '../../../src/browser/inspector/index.js';
import { uniqueName, waitFor } from './harness.js';
import type { CronWorkerConfig } from './pages/cron-worker.js';
import { tick } from './pages/cron-workflows.js';

const MINUTE = 60_000;
const SPEED = 30;

interface CronHost {
  readonly worker: Worker;
  readonly client: WorkflowClient;
  readonly events: HostEvent[];
  role(role: string): Promise<void>;
}

const workers: Worker[] = [];
const elements: HTMLElement[] = [];

afterEach(() => {
  for (const e of elements.splice(0)) e.remove();
  for (const w of workers.splice(0)) w.terminate();
});

/** A worker of store `name`; every one of a test gets the same cron time base. */
function startCronHost(base: Omit<CronWorkerConfig, 'hostId'>, hostId: string): CronHost {
  const config: CronWorkerConfig = { ...base, hostId };
  const worker = new Worker(new URL('./pages/cron-worker.ts', import.meta.url), { type: 'module', name: JSON.stringify(config) });
  workers.push(worker);
  const client = connect(worker, { persist: false });
  const events: HostEvent[] = [];
  client.subscribe((e) => events.push(e));
  return { worker, client, events, role: (role) => waitFor(async () => (await client.info()).role === role, `${hostId} to be ${role}`).then(() => undefined) };
}

/** The fire times of the schedule's runs the store keeps (run id `cron-tick-{fireMs}`), ascending. */
async function firedTimes(client: WorkflowClient): Promise<number[]> {
  const page = await client.listFinishedRuns({ status: 'succeeded' });
  return page.runs
    .map((r) => /^cron-tick-(\d+)$/.exec(r.runId)?.[1])
    .filter((t): t is string => t !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

const consecutive = (times: readonly number[]): boolean => times.every((t, i) => i === 0 || t - times[i - 1]! === MINUTE);

describe('schedules on the browser host', () => {
  it('the leader fires once per tick, a follower lists the schedules, and a takeover goes on from the recorded firing', async () => {
    const base = { name: uniqueName('cron'), cronStartMs: Date.parse('2025-01-01T00:00:50Z'), realStartMs: Date.now(), speed: SPEED };
    const a = startCronHost(base, 'ca');
    await a.role('leader');
    const b = startCronHost(base, 'cb');
    await b.role('follower');

    await waitFor(async () => (await firedTimes(b.client)).length >= 2, 'two firings by the leader');
    // The follower's list is the leader's answer.
    const listed = await b.client.listSchedules();
    expect(listed.map((s) => [s.name, s.lastFireMs! >= Date.parse('2025-01-01T00:02:00Z')])).toEqual([['tick', true]]);
    // Right after a firing ended (the next is about two seconds away): what the leader recorded.
    const terminals = (): number => a.events.filter((e) => e.type === 'terminal' && e.runId.startsWith('cron-tick-')).length;
    const seen = terminals();
    await waitFor(() => terminals() > seen, 'the next firing to end');
    const [recorded] = await a.client.listSchedules();
    a.worker.terminate();

    expect(recorded).toMatchObject({ name: 'tick', cron: '* * * * *', timezone: 'Europe/Paris', declared: true, nextFireMs: recorded!.lastFireMs! + MINUTE });
    expect(recorded!.target).toMatchObject({ type: 'start', workflow: 'test.tick@1', queueName: 'workflow-steps' });
    expect(recorded!.target.input).toBeInstanceOf(Uint8Array);
    const before = await waitFor(async () => {
      const times = await firedTimes(b.client).catch(() => undefined);
      return times?.includes(recorded!.lastFireMs!) ? times : undefined;
    }, 'the recorded firing to be listed');
    expect(consecutive(before)).toBe(true);

    // The follower takes over and fires the recorded next firing, then the ones after it.
    await b.role('leader');
    const after = await waitFor(async () => {
      const times = await firedTimes(b.client);
      return times.filter((t) => t > recorded!.lastFireMs!).length >= 2 ? times : undefined;
    }, 'two firings by the new leader');
    const next = after.filter((t) => t > recorded!.lastFireMs!);
    expect(next[0]).toBe(recorded!.nextFireMs);
    expect(new Set(after).size).toBe(after.length);
    expect(await b.client.workflowRun(tick, `cron-tick-${next[0]}`).result()).toBe(`tock cron-tick-${next[0]}`);
    const [now] = await b.client.listSchedules();
    expect(now!.lastFireMs).toBeGreaterThanOrEqual(next[1]!);
  });

  it('the inspector lists the schedule: name, expression, zone, what it fires, next and last firing', async () => {
    const base = { name: uniqueName('cron-inspector'), cronStartMs: Date.parse('2025-01-01T00:00:50Z'), realStartMs: Date.now(), speed: SPEED };
    const host = startCronHost(base, 'ci');
    await host.role('leader');
    defineTaqubaInspector();
    const el = document.createElement('taquba-inspector') as TaqubaInspectorElement;
    el.options = { pollMs: 200 };
    el.client = host.client;
    document.body.append(el);
    elements.push(el);
    const section = (): HTMLElement => el.shadowRoot!.querySelector<HTMLElement>('[part~="schedules"]')!;

    await waitFor(() => !section().hidden && /Schedules \(1\)/.test(section().textContent ?? ''), 'the schedules section');
    const row = (): string => section().querySelector('[part~="schedule"]')?.textContent ?? '';
    expect(row()).toContain('tick');
    expect(row()).toContain('* * * * *');
    expect(row()).toContain('Europe/Paris');
    expect(row()).toContain('workflow test.tick@1');
    expect([...section().querySelectorAll('th[scope="col"]')].map((th) => th.textContent)).toEqual(['Schedule', 'Cron', 'Zone', 'Fires', 'Next firing', 'Last firing']);
    // Once it fired, the last firing is a time, no longer "not yet".
    await waitFor(() => !row().includes('not yet'), 'a last firing');
  });
});
