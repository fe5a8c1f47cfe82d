import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { describeKvEngineSuite } from './kv-engine.suite.js';

describeKvEngineSuite('memory', async () => ({ store: new MemoryObjectStore() }));
