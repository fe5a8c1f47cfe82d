/** The fencing suite over IndexedDbObjectStore, a fresh database per test. */
import { indexedDbStore } from '../../support/browser-stores.js';
import { describeFencingSuite } from '../../core/kv/fencing.suite.js';

const idb = indexedDbStore('kv-fence');
describeFencingSuite('indexeddb', async () => ({ store: await idb.factory() }));
