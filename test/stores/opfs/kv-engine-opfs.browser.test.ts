/** The KV engine suite over OpfsObjectStore, each store living in a dedicated worker (see opfs-worker-client.ts). */
import { opfsStore } from '../../support/browser-stores.js';
import { describeKvEngineSuite } from '../../core/kv/kv-engine.suite.js';

const opfs = opfsStore('kv');
describeKvEngineSuite('opfs (in a dedicated worker)', async () => ({ store: await opfs.factory() }), { modelSteps: 400 });
