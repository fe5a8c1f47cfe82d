/** The workflow suites over S3ObjectStore (see s3Store in test/support/stores.ts for the target). */
import { s3Store } from '../../support/stores.js';
import { defineWorkflowSuites } from '../../core/workflow/workflow-suites.js';

const s3 = s3Store();
defineWorkflowSuites(s3.name, s3.factory);
