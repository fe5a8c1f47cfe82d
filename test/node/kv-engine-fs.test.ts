/** The KV engine suite over FileSystemObjectStore, a fresh temp directory per test. */
import { fsStore } from '../support/stores.js';
import { describeKvEngineSuite } from '../core/kv/kv-engine.suite.js';

// Several writers of one engine meet in this process (fencing is under test), so the store's
// writer lock, which would refuse the second with LOCKED first, is off.
const fs = fsStore({ writerLock: false });
describeKvEngineSuite('filesystem', async () => ({ store: await fs.factory() }), { modelSteps: 600 });
