/** The fencing suite over OpfsObjectStore, each store living in a dedicated worker (see opfs-worker-client.ts). */
import { opfsStore } from '../../support/browser-stores.js';
import { describeFencingSuite } from '../../core/kv/fencing.suite.js';

const opfs = opfsStore('kv-fence');
describeFencingSuite('opfs (in a dedicated worker)', async () => ({ store: await opfs.factory() }));
