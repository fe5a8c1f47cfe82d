/** The fencing suite on S3; the newer writers open through their own clients, as other processes would. */
import { s3Store } from '../../support/stores.js';
import { describeFencingSuite } from '../../core/kv/fencing.suite.js';

const s3 = s3Store();
describeFencingSuite('s3', async () => {
  const store = s3.target().newStore();
  return { store, another: () => s3.target().newStore({ prefix: store.prefix }) };
});
