/** The KV engine suite over IndexedDbObjectStore, a fresh database per test. */
import { indexedDbStore } from '../../support/browser-stores.js';
import { describeKvEngineSuite } from '../../core/kv/kv-engine.suite.js';

const idb = indexedDbStore('kv');
describeKvEngineSuite('indexeddb', async () => ({ store: await idb.factory() }), { modelSteps: 400 });
