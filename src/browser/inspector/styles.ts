/**
 * The inspector's stylesheet (inside its shadow root). Every colour, font and spacing comes from
 * a `--taquba-inspector-*` custom property with a default, so an app restyles the component by
 * setting those properties on it (they inherit through the shadow boundary); `::part()` reaches
 * the named parts for anything else. README "In-page inspector" lists both.
 */
export const INSPECTOR_CSS = `
:host {
  --_bg: var(--taquba-inspector-bg, #ffffff);
  --_fg: var(--taquba-inspector-fg, #1c2430);
  --_muted: var(--taquba-inspector-muted, #5d6b7c);
  --_border: var(--taquba-inspector-border, #dde2e8);
  --_surface: var(--taquba-inspector-surface, #f6f7f9);
  --_accent: var(--taquba-inspector-accent, #2557d6);
  --_accent-fg: var(--taquba-inspector-accent-fg, #ffffff);
  --_ok: var(--taquba-inspector-ok, #1d7a46);
  --_warn: var(--taquba-inspector-warn, #a15c00);
  --_bad: var(--taquba-inspector-bad, #b3261e);
  --_wait: var(--taquba-inspector-wait, #6a3fb5);
  --_focus: var(--taquba-inspector-focus, #8fb0ff);
  --_radius: var(--taquba-inspector-radius, 8px);
  --_gap: var(--taquba-inspector-gap, 0.75rem);
  display: block;
  container-type: inline-size;
  font: var(--taquba-inspector-font, 14px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif);
  color: var(--_fg);
  background: var(--_bg);
}
:host([hidden]) { display: none; }
* { box-sizing: border-box; }
.root { display: grid; grid-template-columns: minmax(220px, 1fr) minmax(300px, 2fr); gap: var(--_gap); align-items: start; }
@container (max-width: 640px) { .root { grid-template-columns: 1fr; } }
section { min-width: 0; border: 1px solid var(--_border); border-radius: var(--_radius); padding: var(--_gap); background: var(--_bg); }
section:focus { outline: none; }
section:focus-visible { outline: 3px solid var(--_focus); }
.wide { grid-column: 1 / -1; }
h2 { font-size: 1rem; margin: 0; }
h3 { font-size: 0.9rem; margin: 0.9rem 0 0.35rem; color: var(--_muted); }
.head { display: flex; flex-wrap: wrap; gap: 0.4rem 0.75rem; align-items: center; justify-content: space-between; margin-bottom: 0.5rem; }
label { display: inline-flex; align-items: center; gap: 0.35rem; color: var(--_muted); font-size: 0.85rem; }
select, button { font: inherit; color: var(--_fg); }
select { padding: 0.3rem 0.4rem; border: 1px solid var(--_border); border-radius: 6px; background: var(--_bg); min-height: 2rem; }
button { padding: 0.35rem 0.75rem; min-height: 2rem; border-radius: 6px; border: 1px solid var(--_border); background: var(--_bg); cursor: pointer; }
button:hover:not(:disabled) { border-color: var(--_accent); }
button:disabled { opacity: 0.5; cursor: not-allowed; }
button.primary { background: var(--_accent); border-color: var(--_accent); color: var(--_accent-fg); }
button.danger { color: var(--_bad); }
:focus-visible { outline: 3px solid var(--_focus); outline-offset: 2px; }
ul, ol { list-style: none; margin: 0; padding: 0; }
.runs li + li { margin-top: 0.35rem; }
.run { width: 100%; text-align: left; display: flex; flex-wrap: wrap; gap: 0.15rem 0.5rem; align-items: baseline; }
.run[aria-current='true'] { border-color: var(--_accent); box-shadow: inset 3px 0 0 var(--_accent); }
.run-title { flex: 1 1 10rem; min-width: 0; font-weight: 600; overflow-wrap: anywhere; }
.meta { font-size: 0.8rem; color: var(--_muted); overflow-wrap: anywhere; }
.run .meta { flex: 1 1 100%; }
.badge { flex: none; display: inline-block; font-size: 0.75rem; font-weight: 600; padding: 0.05rem 0.5rem; border-radius: 999px; background: var(--_surface); color: var(--_muted); white-space: nowrap; }
.badge.running, .badge.pending { color: var(--_accent); }
.badge.waiting-for-signal, .badge.waiting-for-slot { color: var(--_wait); }
.badge.scheduled, .badge.cancelling { color: var(--_warn); }
.badge.succeeded { color: var(--_ok); }
.badge.failed, .badge.dead { color: var(--_bad); }
.empty { color: var(--_muted); margin: 0.25rem 0; }
.error { color: var(--_bad); margin: 0.25rem 0; }
.detail-title { display: flex; flex-wrap: wrap; gap: 0.25rem 0.5rem; align-items: baseline; margin: 0.25rem 0; }
.detail-title strong { flex: 0 1 auto; min-width: 0; overflow-wrap: anywhere; }
.timeline { border-left: 2px solid var(--_border); margin-left: 0.4rem; }
.step { position: relative; padding: 0.3rem 0 0.55rem 1rem; }
.step::before { content: ''; position: absolute; left: -7px; top: 0.55rem; width: 12px; height: 12px; border-radius: 50%; background: var(--_border); border: 2px solid var(--_bg); }
.step.done::before { background: var(--_ok); }
.step.running::before, .step.pending::before { background: var(--_accent); }
.step.running::before { animation: pulse 1s infinite alternate; }
.step.waiting::before { background: var(--_wait); }
.step.scheduled::before, .step.cancelling::before { background: var(--_warn); }
.step.failed::before { background: var(--_bad); }
.step.upcoming { color: var(--_muted); }
.step.upcoming::before { background: var(--_bg); border-color: var(--_border); }
@keyframes pulse { to { opacity: 0.35; } }
@media (prefers-reduced-motion: reduce) { .step.running::before { animation: none; } }
.step-name { font-weight: 600; }
.phase { font-size: 0.8rem; color: var(--_muted); margin-left: 0.35rem; }
.attempts li, .facts { font-size: 0.82rem; color: var(--_muted); }
.facts { margin: 0.1rem 0; }
.attempts .failed { color: var(--_warn); }
.note { font-size: 0.85rem; margin: 0.1rem 0; overflow-wrap: anywhere; }
.values li { padding: 0.3rem 0; border-bottom: 1px solid var(--_border); }
summary { cursor: pointer; padding: 0.15rem 0; overflow-wrap: anywhere; }
.preview { color: var(--_muted); font-size: 0.8rem; }
details[open] .preview { display: none; }
.key { font: 0.8rem/1.4 var(--taquba-inspector-mono-font, ui-monospace, monospace); overflow-wrap: anywhere; }
pre { margin: 0.2rem 0 0; padding: 0.4rem 0.5rem; background: var(--_surface); border-radius: 6px; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 14rem; overflow: auto; font: 0.8rem/1.4 var(--taquba-inspector-mono-font, ui-monospace, monospace); }
.dead li { padding: 0.45rem 0; border-bottom: 1px solid var(--_border); display: flex; flex-wrap: wrap; gap: 0.3rem 0.5rem; align-items: center; }
.dead .what { flex: 1 1 14rem; min-width: 0; overflow-wrap: anywhere; }
.dead .actions { display: flex; gap: 0.4rem; flex-wrap: wrap; }
table { border-collapse: collapse; width: 100%; font-size: 0.85rem; }
th, td { text-align: right; padding: 0.25rem 0.5rem; border-bottom: 1px solid var(--_border); }
th:first-child, td:first-child { text-align: left; overflow-wrap: break-word; }
.table-wrap { overflow-x: auto; }
.schedules th, .schedules td { text-align: left; }
code { font: 0.8rem/1.4 var(--taquba-inspector-mono-font, ui-monospace, monospace); }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
`;

/** The custom properties the stylesheet reads, for documentation and tests. */
export const INSPECTOR_CSS_PROPERTIES: readonly string[] = [...new Set(INSPECTOR_CSS.match(/--taquba-inspector-[a-z-]+/g) ?? [])];
