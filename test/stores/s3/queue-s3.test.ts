/** The queue suites over S3ObjectStore (see s3Store in test/support/stores.ts for the target). */
import { s3Store } from '../../support/stores.js';
import { defineQueueSuites } from '../../core/queue/queue-suites.js';

const s3 = s3Store();
defineQueueSuites(s3.name, s3.factory);
