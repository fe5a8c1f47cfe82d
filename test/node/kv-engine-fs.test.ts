/**
 * The KV engine suite over FileSystemObjectStore, a fresh temp directory per test, on both WAL
 * paths: the append log (the default) and WAL objects (`appendLogs: false`).
 */
import { fsStore } from '../support/stores.js';
import { describeKvEngineSuite } from '../core/kv/kv-engine.suite.js';

// Several writers of one engine meet in this process (fencing is under test), so the store's
// writer lock, which would refuse the second with LOCKED first, is off.
const logs = fsStore({ writerLock: false });
describeKvEngineSuite('filesystem (append-log WAL)', async () => ({ store: await logs.factory() }), { modelSteps: 600 });
const objects = fsStore({ writerLock: false, appendLogs: false });
describeKvEngineSuite('filesystem (WAL objects)', async () => ({ store: await objects.factory() }), { modelSteps: 600 });
