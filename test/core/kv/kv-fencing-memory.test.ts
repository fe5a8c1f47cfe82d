import { MemoryObjectStore } from '../../../src/core/objects/index.js';
import { describeFencingSuite } from './fencing.suite.js';

describeFencingSuite('memory', async () => ({ store: new MemoryObjectStore() }));
