// The same contract in real Chromium: proves the suite (and the memory store) are platform-neutral,
// so the IndexedDB and OPFS adapters can run it unchanged.
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { describeObjectStoreConformance } from './object-store.conformance.js';

describeObjectStoreConformance('MemoryObjectStore (browser)', async () => ({ store: new MemoryObjectStore() }));
