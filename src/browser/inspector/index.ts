/**
 * `taquba-workflow/browser/inspector`: `<taquba-inspector>`, a framework-free web component that
 * shows a store's runs live through a page's `WorkflowClient`: run list with a state filter, a
 * run's timeline (attempts with times, steps still to come, signals, memo entries, KV values),
 * dead letters with retry and discard, queue counts. Register it with `defineTaqubaInspector()`.
 *
 * Importing this module touches no browser API.
 */
export { defineTaqubaInspector, RUN_SELECT_EVENT } from './element.js';
export type { InspectorClient, InspectorOptions, TaqubaInspectorElement } from './element.js';
export type { RunDescription, RunEnding, StepDescription } from './timeline.js';
export { INSPECTOR_CSS_PROPERTIES } from './styles.js';
