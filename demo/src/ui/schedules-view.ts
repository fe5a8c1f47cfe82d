/**
 * The "Scheduled tasks" panel: each schedule the runtime keeps (`client.listSchedules()`), with
 * when it fires and its next and last firing, in this browser's words and time zone.
 */
import type { ScheduleView } from 'taquba-workflow/browser';
import { DIGEST_SCHEDULE } from '../agent/digest-workflow.js';
import { byId, h, replaceChildren } from './dom.js';

/** What the demo's schedules do and when, in words (the cron expression is shown for others). */
const DESCRIPTIONS: Readonly<Record<string, { readonly title: string; readonly when: (zone: string) => string }>> = {
  [DIGEST_SCHEDULE]: { title: "Daily digest of this browser's runs and model calls", when: (zone) => `every day at 08:00 (${zone})` },
};

const dateTime = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });

export function renderSchedules(schedules: readonly ScheduleView[]): void {
  const items = schedules.map((s) => {
    const known = DESCRIPTIONS[s.name];
    const last = s.lastFireMs === undefined ? 'not yet' : dateTime.format(s.lastFireMs);
    return h(
      'li',
      { 'data-schedule': s.name },
      h('strong', {}, known?.title ?? s.name),
      h('span', { class: 'when' }, known ? known.when(s.timezone) : `cron ${s.cron} (${s.timezone})`),
      h('span', { class: 'when' }, `Next: ${dateTime.format(s.nextFireMs)} · last: ${last}`),
    );
  });
  replaceChildren(byId('schedule-list'), ...(items.length > 0 ? items : [h('li', { class: 'empty' }, 'No scheduled tasks.')]));
}
