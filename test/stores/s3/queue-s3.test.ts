/**
 * The queue suites over S3ObjectStore on the local S3 test server (or the endpoint configured in
 * the environment, see test/setup/s3-target.ts). One server per file; every queue gets a store on
 * a fresh prefix of the one bucket.
 */
import { afterAll, beforeAll } from 'vitest';
import { defineQueueKvOffloadSuite } from '../../core/queue/queue-kv-offload.suite.js';
import { defineQueueLifecycleSuite } from '../../core/queue/queue-lifecycle.suite.js';
import { defineQueueOperationsSuite } from '../../core/queue/queue-operations.suite.js';
import { defineQueueSettlementSuite } from '../../core/queue/queue-settlement.suite.js';
import { defineQueueWorkerReaderSuite } from '../../core/queue/queue-worker-reader.suite.js';
import { openS3Target, type S3Target } from '../../setup/s3-target.js';

let target: S3Target;
beforeAll(async () => {
  target = await openS3Target();
});
afterAll(async () => {
  await target?.close();
});

const s3 = () => target.newStore();
defineQueueLifecycleSuite('s3 store', s3);
defineQueueSettlementSuite('s3 store', s3);
defineQueueOperationsSuite('s3 store', s3);
defineQueueKvOffloadSuite('s3 store', s3);
defineQueueWorkerReaderSuite('s3 store', s3);
