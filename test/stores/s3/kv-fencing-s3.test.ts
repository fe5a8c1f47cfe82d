/** The fencing suite on S3; the newer writers open through their own clients, as other processes would. */
import { afterAll, beforeAll } from 'vitest';
import { describeFencingSuite } from '../../core/kv/fencing.suite.js';
import { openS3Target, type S3Target } from '../../setup/s3-target.js';

let target: S3Target;
beforeAll(async () => {
  target = await openS3Target();
});
afterAll(async () => {
  await target?.close();
});

describeFencingSuite('s3', async () => {
  const store = target.newStore();
  return { store, another: () => target.newStore({ prefix: store.prefix }) };
});
