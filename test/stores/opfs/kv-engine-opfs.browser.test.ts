/**
 * The KV engine suite over OpfsObjectStore, each store living in a dedicated worker (see
 * opfs-worker-client.ts), on both WAL paths: append logs (the default) and WAL objects.
 */
import { opfsStore } from '../../support/browser-stores.js';
import { describeKvEngineSuite } from '../../core/kv/kv-engine.suite.js';

const logs = opfsStore('kv');
describeKvEngineSuite('opfs (in a dedicated worker, append-log WAL)', async () => ({ store: await logs.factory() }), { modelSteps: 400 });
const objects = opfsStore('kv-objects', { appendLogs: false });
describeKvEngineSuite('opfs (in a dedicated worker, WAL objects)', async () => ({ store: await objects.factory() }), { modelSteps: 200 });
