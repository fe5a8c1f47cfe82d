/**
 * The workflow suites over S3ObjectStore on the local S3 test server (or the endpoint configured
 * in the environment, see test/setup/s3-target.ts). One server per file; every runtime gets a
 * store on a fresh prefix of the one bucket.
 */
import { afterAll, beforeAll } from 'vitest';
import { defineMemoSuite } from '../../core/workflow/memo.suite.js';
import { defineWorkflowBasicsSuite } from '../../core/workflow/workflow-basics.suite.js';
import { defineWorkflowEffectsSuite } from '../../core/workflow/workflow-effects.suite.js';
import { defineWorkflowOutcomesSuite } from '../../core/workflow/workflow-outcomes.suite.js';
import { defineWorkflowSignalsSuite } from '../../core/workflow/workflow-signals.suite.js';
import { openS3Target, type S3Target } from '../../setup/s3-target.js';

let target: S3Target;
beforeAll(async () => {
  target = await openS3Target();
});
afterAll(async () => {
  await target?.close();
});

const s3 = () => target.newStore();
defineWorkflowBasicsSuite('s3 store', s3);
defineWorkflowOutcomesSuite('s3 store', s3);
defineWorkflowSignalsSuite('s3 store', s3);
defineWorkflowEffectsSuite('s3 store', s3);
defineMemoSuite('s3 store', s3);
