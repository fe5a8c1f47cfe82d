/** Registers every shared workflow suite (the *.suite.ts files here, the memo suite included) for one store. */
import type { StoreFactory } from './harness.js';
import { defineFinishedRunsSuite } from './finished-runs.suite.js';
import { defineMemoSuite } from './memo.suite.js';
import { defineWorkflowBasicsSuite } from './workflow-basics.suite.js';
import { defineWorkflowEffectsSuite } from './workflow-effects.suite.js';
import { defineWorkflowOutcomesSuite } from './workflow-outcomes.suite.js';
import { defineWorkflowSignalsSuite } from './workflow-signals.suite.js';

export function defineWorkflowSuites(name: string, factory: StoreFactory): void {
  defineWorkflowBasicsSuite(name, factory);
  defineWorkflowOutcomesSuite(name, factory);
  defineWorkflowSignalsSuite(name, factory);
  defineWorkflowEffectsSuite(name, factory);
  defineMemoSuite(name, factory);
  defineFinishedRunsSuite(name, factory);
}
